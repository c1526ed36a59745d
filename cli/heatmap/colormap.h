// The heat maps' colour scale: a perceptually ordered map from dark violet through blue and teal
// to yellow, in the spirit of matplotlib's viridis but computed here from its own definition in
// the OKLab colour space (not a copied table). See colormap.cpp for the construction.
#pragma once

#include "cli/heatmap/rgb.h"

namespace encrt::heatmap {

// The colour of t in [0, 1] (0 = the scale's minimum, 1 = its maximum); t outside is clamped
// and NaN reads as 0. The same t always gives the same colour.
Rgb colormap(double t);

// OKLab lightness of an sRGB colour (0 black .. 1 white); the tests use it to check that the map
// is monotonic in perceived lightness.
double oklab_lightness(Rgb c);

}  // namespace encrt::heatmap
