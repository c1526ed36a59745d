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

/* ---- Task heads (a model with a classifier head; see encrt_model_head). */

/* Sequence classification of texts (second_texts NULL) or of pairs (second_texts[i] with
 * texts[i]): label_ids[count] gets each one's best label (encrt_model_head_label names it);
 * scores, when not NULL, gets [count, num_labels] scores (scores_capacity floats there). */
typedef struct encrt_classifier encrt_classifier;
ENCRT_API encrt_status encrt_classifier_create(const encrt_model* model, const encrt_task_options* options,
                                               encrt_classifier** out_classifier);
ENCRT_API void encrt_classifier_free(encrt_classifier* classifier); /* NULL is a no-op */
ENCRT_API encrt_status encrt_classifier_num_labels(const encrt_classifier* classifier, int* num_labels);
ENCRT_API encrt_status encrt_classifier_classify(encrt_classifier* classifier, const char* const* texts,
                                                 const char* const* second_texts, size_t count, int* label_ids,
                                                 float* scores, size_t scores_capacity);

/* Cross-encoder reranking: order[count] gets the passages' indices, most relevant first, and
 * scores (may be NULL) their scores in that order. */
typedef struct encrt_reranker encrt_reranker;
ENCRT_API encrt_status encrt_reranker_create(const encrt_model* model, const encrt_task_options* options,
                                             encrt_reranker** out_reranker);
ENCRT_API void encrt_reranker_free(encrt_reranker* reranker); /* NULL is a no-op */
ENCRT_API encrt_status encrt_reranker_rank(encrt_reranker* reranker, const char* query, const char* const* passages,
                                           size_t count, size_t* order, float* scores);

/* Named entities of one text. label points into the tagger and stays valid until its next call;
 * start/end are UTF-8 byte offsets into the text. */
typedef struct encrt_entity {
  const char* label;
  float score;
  size_t start;
  size_t end;
} encrt_entity;
typedef struct encrt_tagger encrt_tagger;
ENCRT_API encrt_status encrt_tagger_create(const encrt_model* model, const encrt_task_options* options,
                                           encrt_tagger** out_tagger);
ENCRT_API void encrt_tagger_free(encrt_tagger* tagger); /* NULL is a no-op */
/* aggregation: "none", "simple" (NULL: this), "first", "average" or "max" (Hugging Face's
 * token-classification pipeline's strategies; the "O" label is dropped). Writes up to capacity
 * entities and their number to *count (also when capacity is too small: then
 * ENCRT_INVALID_ARGUMENT). */
ENCRT_API encrt_status encrt_tagger_tag(encrt_tagger* tagger, const char* text, const char* aggregation,
                                        encrt_entity* entities, size_t capacity, size_t* count);

#ifdef __cplusplus
}
#endif

#endif /* ENCRT_TASKS_H_ */
