/* FMU states (canGetAndSetFMUState) for the FMI 3 test FMUs: a copy of the whole instance.
 * Included after the model defines its `Instance` struct and EXPORT. */
#include <stdlib.h>
#include <string.h>

EXPORT fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState* s) {
  if (!s) return fmi3Error;
  if (!*s && !(*s = malloc(sizeof(Instance)))) return fmi3Error;
  memcpy(*s, c, sizeof(Instance));
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState s) {
  if (!s) return fmi3Error;
  memcpy(c, s, sizeof(Instance));
  return fmi3OK;
}
EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState* s) {
  (void)c;
  if (s) free(*s), *s = NULL;
  return fmi3OK;
}
