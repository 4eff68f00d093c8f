/* The oscillator of oscillator_model.h as an FMI 2.0 FMU (model exchange and co-simulation). */
#define MODEL_GUID "{5b0c1a52-stride-oscillator-fmi2}"
#include "oscillator_model.h"
#include "fmi2_frame.h"
