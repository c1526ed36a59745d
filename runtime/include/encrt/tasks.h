/* encrt tasks, C API: text in, sentence embeddings and nearest neighbours out (encrt/tasks.hpp in
 * C). Same conventions as encrt.h: opaque handles, encrt_status results, encrt_last_error() for
 * the message, NULL-checked arguments.
 *   - An embedder borrows its model: free it before the model.
 *   - An embedder is not thread-safe; different embedders may run concurrently on one model. */
#ifndef ENCRT_TASKS_H_
#define ENCRT_TASKS_H_

#include <stddef.h>
#include <stdint.h>

#include "encrt/encrt.h"
#include "encrt/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Set struct_size = sizeof(encrt_task_options) (encrt_task_options_init does). */
typedef struct encrt_task_options {
  size_t struct_size;
  int max_batch;  /* texts per run, >= 1; default 16 */
  int max_seq;    /* tokens per text, [CLS]/[SEP] included; 0 (default) = the model's max_seq_len */
  int truncate;   /* nonzero (default): cut longer texts at max_seq; 0: such a text is an error */
  int threads;    /* >= 1; default 1 */
  const char* backend;          /* NULL or "auto" (default), "cpu", ... as in encrt_session_options */
  const char* backend_options;  /* NULL or "name=value,..." */
} encrt_task_options;

typedef struct encrt_embedder encrt_embedder;

ENCRT_API void encrt_task_options_init(encrt_task_options* options);
ENCRT_API encrt_status encrt_embedder_create(const encrt_model* model, const encrt_task_options* options,
                                             encrt_embedder** out_embedder);
ENCRT_API void encrt_embedder_free(encrt_embedder* embedder); /* NULL is a no-op */
ENCRT_API encrt_status encrt_embedder_dimension(const encrt_embedder* embedder, int* dimension);
/* Unit-length sentence embeddings of texts[0..count) (UTF-8, NUL-terminated) into
 * embeddings[count * dimension] (capacity: floats available there). */
ENCRT_API encrt_status encrt_embedder_embed(encrt_embedder* embedder, const char* const* texts, size_t count,
                                            float* embeddings, size_t capacity);
/* The k rows of corpus [count, dim] with the largest dot product with query [dim], best first
 * (ties: lower index first): their indices and scores into indices[k] / scores[k] (scores may be
 * NULL), their number (min(k, count)) into *found. */
ENCRT_API encrt_status encrt_nearest(const float* corpus, size_t count, int dim, const float* query, size_t k,
                                     size_t* indices, float* scores, size_t* found);

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_TASKS_H_ */
