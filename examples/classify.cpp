// Text classification in C++ alone: each text's label from the model's classifier head
// (sentiment, topic, intent: whatever id2label the checkpoint was trained with).
//
//   encrt_classify MODEL.encrt "some text" ["another text" ...]
//
// The model: a Hugging Face BertForSequenceClassification checkpoint converted with
// `encrt convert` (its id2label and problem type are kept in the file).
#include <cstdio>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"
#include "encrt/tasks.hpp"

namespace {

int fail(const encrt::Status& s) {
  std::fprintf(stderr, "encrt_classify: %s\n", s.to_string().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: encrt_classify MODEL.encrt TEXT [TEXT ...]\n");
    return 2;
  }
  const std::vector<std::string> texts(argv + 2, argv + argc);
  std::unique_ptr<encrt::Model> model;
  if (encrt::Status s = encrt::Model::load(argv[1], &model); !s) return fail(s);
  std::unique_ptr<encrt::TextClassifier> classifier;
  if (encrt::Status s = encrt::TextClassifier::create(*model, encrt::TaskOptions{}, &classifier); !s) return fail(s);
  std::vector<encrt::Classification> results;
  if (encrt::Status s = classifier->classify(texts, &results); !s) return fail(s);
  for (size_t i = 0; i < texts.size(); ++i)
    std::printf("%-12s %.4f  %s\n", results[i].label.c_str(), results[i].score, texts[i].c_str());
  return 0;
}
