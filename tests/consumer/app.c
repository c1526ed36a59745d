/* app.cpp through the C API: the same model, ids and mask, the same lines printed. */
#include <stdio.h>
#include <stdlib.h>

#include <encrt/encrt.h>

static int fail(const char* what) {
  fprintf(stderr, "%s: %s\n", what, encrt_last_error());
  return 1;
}

int main(int argc, char** argv) {
  enum { kBatch = 2, kSeq = 8 };
  encrt_model* model = NULL;
  encrt_session* session = NULL;
  encrt_session_options opt;
  encrt_tensor_info info;
  int32_t ids[kBatch * kSeq], mask[kBatch * kSeq];
  int vocab = 0, b, s;
  long long r, i;
  float* pooled;

  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.encrt\n", argv[0]);
    return 2;
  }
  if (encrt_model_load(argv[1], &model) != ENCRT_OK) return fail("load");
  if (encrt_model_dims(model, &vocab, NULL, NULL, NULL, NULL) != ENCRT_OK) return fail("dims");
  for (b = 0; b < kBatch; ++b)
    for (s = 0; s < kSeq; ++s) {
      ids[b * kSeq + s] = (1 + 7 * b + 5 * s) % vocab;
      mask[b * kSeq + s] = (b == 1 && s >= 5) ? 0 : 1;
    }

  encrt_session_options_init(&opt);
  opt.max_batch = kBatch;
  opt.max_seq = kSeq;
  if (encrt_session_create(model, &opt, &session) != ENCRT_OK) return fail("session");
  if (encrt_session_run(session, kBatch, kSeq, ids, mask, NULL) != ENCRT_OK) return fail("run");

  info.struct_size = sizeof info;
  if (encrt_session_output_info(session, "pooled", &info) != ENCRT_OK) return fail("output");
  pooled = (float*)malloc(info.bytes);
  if (!pooled || encrt_session_copy_output(session, "pooled", pooled, info.bytes) != ENCRT_OK)
    return fail("copy");
  printf("encrt %s: pooled [%lld, %lld]\n", encrt_version(), (long long)info.shape[0],
         (long long)info.shape[1]);
  for (r = 0; r < info.shape[0]; ++r) {
    printf("row %lld:", r);
    for (i = 0; i < 8 && i < info.shape[1]; ++i) printf(" %.6f", pooled[r * info.shape[1] + i]);
    printf("\n");
  }
  free(pooled);
  encrt_session_free(session);
  encrt_model_free(model);
  return 0;
}
