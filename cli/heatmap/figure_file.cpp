#include "cli/heatmap/figure_file.h"

#include <algorithm>
#include <cctype>

#include "cli/heatmap/canvas.h"
#include "cli/heatmap/png_writer.h"
#include "cli/heatmap/svg_writer.h"

namespace encrt::heatmap {

Status image_format_of(const std::string& path, ImageFormat* format) {
  const size_t dot = path.find_last_of('.');
  const size_t slash = path.find_last_of('/');
  std::string ext = dot == std::string::npos || (slash != std::string::npos && dot < slash) ? "" : path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".svg") {
    *format = ImageFormat::kSvg;
    return Status::ok();
  }
  if (ext == ".png") {
    if (!png_available())
      return unsupported("'" + path + "': this build of encrt has no libpng (install libpng-dev and rebuild); "
                         "an .svg works without it");
    *format = ImageFormat::kPng;
    return Status::ok();
  }
  return invalid_argument("'" + path + "': unknown image type" + (ext.empty() ? "" : " '" + ext + "'") +
                          ", the output must end in .png or .svg");
}

Status write_image(const Scene& scene, const std::string& path) {
  ImageFormat format;
  if (Status s = image_format_of(path, &format); !s) return s;
  if (format == ImageFormat::kSvg) return write_svg(scene, path);
  return write_png(rasterize(scene), path);
}

}  // namespace encrt::heatmap
