// Canvases to PNG files with libpng (Debian's libpng-dev). A build without libpng still has these
// functions: png_available() is false and write_png says that PNG needs libpng (SVG still works).
#pragma once

#include <string>

#include "cli/heatmap/canvas.h"
#include "encrt/status.hpp"

namespace encrt::heatmap {

bool png_available();
// An 8-bit RGB PNG; kIoError naming the path when it cannot be written.
Status write_png(const Canvas& canvas, const std::string& path);

}  // namespace encrt::heatmap
