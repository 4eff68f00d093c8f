/* The bouncing ball of bouncing_ball_model.h as an FMI 2.0 model-exchange FMU. */
#define MODEL_GUID "{7d3f6e10-stride-bouncing-ball-fmi2}"
#include "bouncing_ball_model.h"
#include "fmi2_frame.h"
