/* The oscillator of oscillator_model.h as an FMI 3.0 FMU (model exchange and co-simulation). */
#define MODEL_TOKEN "{5b0c1a52-stride-oscillator-fmi3}"
#include "oscillator_model.h"
#include "fmi3_frame.h"
