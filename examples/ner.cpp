// Named entities in C++ alone: people, places, organizations with their character spans, from the
// model's token classification head, grouped over words as Hugging Face's pipeline does.
//
//   encrt_ner MODEL.encrt "some text" ["another text" ...]
//
// The model: a Hugging Face BertForTokenClassification checkpoint (BIO labels) converted with
// `encrt convert`.
#include <cstdio>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"

namespace {

int fail(const encrt::Status& s) {
  std::fprintf(stderr, "encrt_ner: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: encrt_ner MODEL.encrt TEXT [TEXT ...]\n");
    return 2;
  }
  const std::vector<std::string> texts(argv + 2, argv + argc);
  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(argv[1], &model); !s) return fail(s);
  std::unique_ptr<encrt::EntityTagger> tagger;
  if (encrt::Status s = encrt::EntityTagger::create(*model, encrt::TaskOptions{}, &tagger); !s) return fail(s);
  encrt::EntityOptions options;  // the pipeline's "simple" grouping, "O" dropped
  std::vector<std::vector<encrt::Entity>> entities;
  if (encrt::Status s = tagger->tag(texts, options, &entities); !s) return fail(s);
  for (size_t i = 0; i < texts.size(); ++i) {
    std::printf("%s\n", texts[i].c_str());
    for (const encrt::Entity& e : entities[i])
      std::printf("  %-6s %.3f  [%zu, %zu)  %s\n", e.label.c_str(), e.score, e.start, e.end, e.word.c_str());
  }
  return 0;
}
