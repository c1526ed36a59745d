// Which image a figure is written as, chosen by the output path's extension (.png or .svg, any
// case), and writing it.
#pragma once

#include <string>

#include "cli/heatmap/scene.h"
#include "encrt/status.hpp"

namespace encrt::heatmap {

enum class ImageFormat { kPng, kSvg };

// kInvalidArgument for any other extension; kUnsupported for .png in a build without libpng.
Status image_format_of(const std::string& path, ImageFormat* format);
Status write_image(const Scene& scene, const std::string& path);

}  // namespace encrt::heatmap
