/* The bouncing ball of bouncing_ball_model.h as an FMI 3.0 model-exchange FMU. */
#define MODEL_TOKEN "{7d3f6e10-stride-bouncing-ball-fmi3}"
#include "bouncing_ball_model.h"
#include "fmi3_frame.h"
