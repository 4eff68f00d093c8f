/* The oscillator of oscillator_model.h as an FMI 3.0 FMU (model exchange and co-simulation). */
#include <stddef.h>
#define MODEL_TOKEN "{5b0c1a52-stride-oscillator-fmi3}"
#include "oscillator_model.h"
/* The array variable "state" (value reference STATE) holds r[STATE], r[STATE + 1]. */
#define MODEL_ARRAYS
static size_t variable_size(unsigned vr) { return vr == STATE ? 2 : 1; }
#include "fmi3_frame.h"
