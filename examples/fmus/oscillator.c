/* The oscillator of oscillator_model.h as an FMI 2.0 FMU (model exchange and co-simulation). */
#define MODEL_GUID "{5b0c1a52-stride-oscillator-fmi2}"
#define N_INDICATORS 0
#include "oscillator_model.h"

static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) { (void)r; return 0; }

#include "fmi2_frame.h"
