#include "heatmap/heatmap_test_util.h"

#if ENCRT_HEATMAP_HAVE_PNG
#include <png.h>
#endif

namespace encrt::heatmap_test {

std::string decode_png(const std::string& path, DecodedPng* out) {
#if ENCRT_HEATMAP_HAVE_PNG
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str())) return image.message;
  image.format = PNG_FORMAT_RGB;
  out->width = static_cast<int>(image.width);
  out->height = static_cast<int>(image.height);
  out->rgb.assign(PNG_IMAGE_SIZE(image), 0);
  if (!png_image_finish_read(&image, nullptr, out->rgb.data(), 0, nullptr)) {
    const std::string why = image.message;
    png_image_free(&image);
    return why;
  }
  return "";
#else
  (void)path;
  (void)out;
  return "no libpng";
#endif
}

std::string xml_problem(const std::string& x) {
  std::vector<std::string> open;
  auto bad_amp = [](const std::string& s) {
    for (size_t a = s.find('&'); a != std::string::npos; a = s.find('&', a + 1)) {
      const size_t semi = s.find(';', a);
      if (semi == std::string::npos) return true;
      const std::string e = s.substr(a + 1, semi - a - 1);
      if (e != "amp" && e != "lt" && e != "gt" && e != "quot" && e != "apos" && (e.empty() || e[0] != '#')) return true;
    }
    return false;
  };
  size_t i = 0;
  if (x.compare(0, 5, "<?xml") == 0) i = x.find("?>") + 2;
  while (i < x.size()) {
    const size_t lt = x.find('<', i);
    const std::string text = x.substr(i, lt == std::string::npos ? std::string::npos : lt - i);
    if (bad_amp(text)) return "a bare '&' in text: " + text;
    if (lt == std::string::npos) break;
    const size_t gt = x.find('>', lt);
    if (gt == std::string::npos) return "an unclosed tag";
    std::string tag = x.substr(lt + 1, gt - lt - 1);
    if (tag.find('<') != std::string::npos) return "'<' inside a tag: " + tag;
    i = gt + 1;
    if (!tag.empty() && tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "</" + tag.substr(1) + "> closes nothing open";
      open.pop_back();
      continue;
    }
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::string name = tag.substr(0, tag.find(' '));
    // Attributes: name="value" pairs.
    size_t a = name.size();
    while (a < tag.size()) {
      while (a < tag.size() && tag[a] == ' ') ++a;
      if (a >= tag.size()) break;
      const size_t eq = tag.find('=', a);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') return "an unquoted attribute in <" + tag + ">";
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) return "an unterminated attribute in <" + tag + ">";
      if (bad_amp(tag.substr(eq + 2, close - eq - 2))) return "a bare '&' in an attribute of <" + name + ">";
      a = close + 1;
    }
    if (!self_closing) open.push_back(name);
  }
  return open.empty() ? "" : "<" + open.back() + "> is never closed";
}


AttentionFigure shifted_identity(int n, const std::vector<int>& diagonals) {
  AttentionFigure f;
  for (int i = 0; i < n; ++i) f.tokens.push_back("t" + std::to_string(i));
  for (int d : diagonals) {
    std::vector<float> m(static_cast<size_t>(n) * static_cast<size_t>(n), 0.0f);
    for (int q = 0; q < n; ++q)
      if (q + d >= 0 && q + d < n) m[static_cast<size_t>(q) * static_cast<size_t>(n) + static_cast<size_t>(q + d)] = 1.0f;
    f.maps.push_back(std::move(m));
    if (diagonals.size() > 1) f.panel_titles.push_back("head " + std::to_string(f.panel_titles.size()));
  }
  return f;
}

}  // namespace encrt::heatmap_test
