/* What a conformance test model declares for its frame (test_fmu.h): the variable table, the
 * event round, binary values. Included first by each model file. */
#ifndef STRIDE_TEST_MODEL_H
#define STRIDE_TEST_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A Binary value: bytes the model owns (malloc). */
typedef struct {
  unsigned char* data;
  size_t size;
} Bin;

enum VarType { FLOAT64, FLOAT32, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOLEAN, STRING, BINARY };
/* Who may set a variable: nobody, the importer at any time (inputs), before initialization
 * ends (parameters, start values), in configuration mode (structural parameters). */
enum Access { READ_ONLY, INPUT, START, STRUCTURAL };

typedef struct {
  unsigned vr;
  enum VarType type;
  size_t offset; /* offsetof(Model, field) */
  size_t count;  /* elements; 0: model_count() */
  enum Access access;
} Var;

/* One round of event iteration, as the model answers it. */
typedef struct {
  bool again;          /* newDiscreteStatesNeeded */
  bool terminate;      /* terminateSimulation */
  bool states_changed; /* valuesOfContinuousStatesChanged */
  bool next_defined;
  double next;
} Event;

char* fmu_strdup(const char* text);
/* *to becomes a copy of `from` (kept when equal: a String output that does not change). */
void fmu_set_text(char** to, const char* from);

#endif
