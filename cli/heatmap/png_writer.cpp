#include "cli/heatmap/png_writer.h"

#if ENCRT_HEATMAP_HAVE_PNG
#include <png.h>
#endif

namespace encrt::heatmap {

#if ENCRT_HEATMAP_HAVE_PNG

bool png_available() { return true; }

Status write_png(const Canvas& canvas, const std::string& path) {
  // libpng's simplified API: no setjmp/longjmp through C++ frames, errors come back as a message.
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(canvas.width());
  image.height = static_cast<png_uint_32>(canvas.height());
  image.format = PNG_FORMAT_RGB;
  const png_int_32 stride = static_cast<png_int_32>(canvas.width()) * 3;
  if (!png_image_write_to_file(&image, path.c_str(), 0, canvas.rgb(), stride, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    return io_error("cannot write '" + path + "': " + why);
  }
  return Status::ok();
}

#else

bool png_available() { return false; }

Status write_png(const Canvas&, const std::string& path) {
  return unsupported("cannot write '" + path + "': this build of encrt has no libpng (install libpng-dev and "
                     "rebuild), write an .svg instead");
}

#endif

}  // namespace encrt::heatmap
