// encrt::aggregate_entities: Hugging Face's TokenClassificationPipeline.postprocess (transformers
// 4.40: gather_pre_entities, aggregate / aggregate_words / aggregate_word, group_entities /
// group_sub_entities, then the ignore_labels filter), over encrt's Encoding and UTF-8 offsets.
#include "heads/entities.h"

#include <cmath>
#include <string>
#include <vector>

#include "encrt/encrt.hpp"

namespace encrt {

namespace heads {

size_t code_points(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

bool continues_word_by_length(std::string_view token, std::string_view covered, bool unknown) {
  return !unknown && code_points(token) != code_points(covered);
}

BioTag bio_tag(const std::string& label) {
  if (label.rfind("B-", 0) == 0) return {'B', label.substr(2)};
  if (label.rfind("I-", 0) == 0) return {'I', label.substr(2)};
  return {'I', label};
}

std::string group_name(const std::string& label) {
  const size_t dash = label.find('-');
  return dash == std::string::npos ? label : label.substr(dash + 1);
}

}  // namespace heads

namespace {

// A token (kNone, kSimple) or a word (kFirst, kAverage, kMax) with its chosen label.
struct Labelled {
  int label = 0;
  double score = 0.0;
  size_t start = 0, end = 0;
  int first_token = 0, last_token = 0;
};

// The token's row of scores: its most probable label (the first of equals, as numpy's argmax).
int argmax(const float* row, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (row[i] > row[best]) best = i;
  return best;
}

}  // namespace

const char* entity_aggregation_name(EntityAggregation aggregation) {
  switch (aggregation) {
    case EntityAggregation::kNone: return "none";
    case EntityAggregation::kSimple: return "simple";
    case EntityAggregation::kFirst: return "first";
    case EntityAggregation::kAverage: return "average";
    case EntityAggregation::kMax: return "max";
  }
  return "unknown";
}

Status parse_entity_aggregation(const std::string& name, EntityAggregation* out) {
  if (out == nullptr) return invalid_argument("parse_entity_aggregation: out is null");
  for (EntityAggregation a : {EntityAggregation::kNone, EntityAggregation::kSimple, EntityAggregation::kFirst,
                              EntityAggregation::kAverage, EntityAggregation::kMax}) {
    if (name == entity_aggregation_name(a)) {
      *out = a;
      return Status::ok();
    }
  }
  return invalid_argument("unknown entity aggregation '" + name + "' (none, simple, first, average or max)");
}

Status aggregate_entities(const std::string& text, const Encoding& encoding, const float* scores, int num_labels,
                          const std::vector<std::string>& labels, const EntityOptions& options,
                          std::vector<Entity>* out) {
  if (out == nullptr) return invalid_argument("aggregate_entities: out is null");
  out->clear();
  const size_t n = encoding.size();
  if (num_labels < 1) return invalid_argument("aggregate_entities: num_labels must be at least 1");
  if (labels.size() != static_cast<size_t>(num_labels))
    return invalid_argument("aggregate_entities: " + std::to_string(labels.size()) + " label names for " +
                            std::to_string(num_labels) + " labels");
  if (scores == nullptr && n > 0) return invalid_argument("aggregate_entities: scores is null");
  if (encoding.tokens.size() != n || encoding.offsets.size() != n || encoding.word_ids.size() != n ||
      encoding.special_tokens_mask.size() != n || (!encoding.sequence_ids.empty() && encoding.sequence_ids.size() != n))
    return invalid_argument("aggregate_entities: the encoding's arrays differ in length (use one from Tokenizer)");
  if (static_cast<uint8_t>(options.aggregation) > static_cast<uint8_t>(EntityAggregation::kMax))
    return invalid_argument("aggregate_entities: unknown aggregation " +
                            std::to_string(static_cast<int>(options.aggregation)));
  const size_t width = static_cast<size_t>(num_labels);

  // gather_pre_entities: the tokens that are not added special tokens (nor padding).
  std::vector<size_t> tokens;
  std::vector<bool> subword;
  int32_t previous_word = -1;
  for (size_t i = 0; i < n; ++i) {
    if (encoding.special_tokens_mask[i]) continue;
    if (!encoding.sequence_ids.empty() && encoding.sequence_ids[i] != 0)
      return invalid_argument("aggregate_entities: token " + std::to_string(i) +
                              " is from the second text of a pair; entities come from one text");
    const TextSpan span = encoding.offsets[i];
    if (span.start > span.end || span.end > text.size())
      return invalid_argument("aggregate_entities: token " + std::to_string(i) + "'s offsets [" +
                              std::to_string(span.start) + ", " + std::to_string(span.end) +
                              ") are outside the text of " + std::to_string(text.size()) +
                              " bytes (is the encoding this text's?)");
    for (size_t l = 0; l < width; ++l)
      if (!std::isfinite(scores[i * width + l]))
        return invalid_argument("aggregate_entities: the score of token " + std::to_string(i) + ", label " +
                                std::to_string(l) + " is not finite");
    const bool unknown = options.unk_id >= 0 && encoding.ids[i] == options.unk_id;
    if (options.subwords == SubwordRule::kWordIds)
      subword.push_back(!tokens.empty() && encoding.word_ids[i] >= 0 && encoding.word_ids[i] == previous_word);
    else
      subword.push_back(heads::continues_word_by_length(encoding.tokens[i],
                                                        std::string_view(text).substr(span.start, span.end - span.start),
                                                        unknown));
    previous_word = encoding.word_ids[i];
    tokens.push_back(i);
  }
  auto row = [&](size_t token) { return scores + token * width; };
  auto token_item = [&](size_t token) {
    const int label = argmax(row(token), num_labels);
    return Labelled{label, row(token)[label], encoding.offsets[token].start, encoding.offsets[token].end,
                    static_cast<int>(token), static_cast<int>(token)};
  };
  auto ignored = [&](const std::string& label) {
    for (const std::string& l : options.ignore_labels)
      if (l == label) return true;
    return false;
  };
  auto emit = [&](const std::string& label, double score, const Labelled& first, const Labelled& last) {
    if (ignored(label)) return;
    Entity e;
    e.label = label;
    e.score = static_cast<float>(score);
    e.start = first.start;
    e.end = last.end;
    e.word = text.substr(e.start, e.end - e.start);
    e.first_token = first.first_token;
    e.last_token = last.last_token;
    out->push_back(std::move(e));
  };

  // aggregate: one labelled item per token, or per word.
  std::vector<Labelled> items;
  if (options.aggregation == EntityAggregation::kNone || options.aggregation == EntityAggregation::kSimple) {
    for (size_t t : tokens) items.push_back(token_item(t));
  } else {
    // aggregate_words: a word is a token and the subword tokens after it.
    for (size_t w = 0; w < tokens.size();) {
      size_t end = w + 1;
      while (end < tokens.size() && subword[end]) ++end;
      Labelled item{0, 0.0, encoding.offsets[tokens[w]].start, encoding.offsets[tokens[end - 1]].end,
                    static_cast<int>(tokens[w]), static_cast<int>(tokens[end - 1])};
      if (options.aggregation == EntityAggregation::kFirst) {
        item.label = argmax(row(tokens[w]), num_labels);
        item.score = row(tokens[w])[item.label];
      } else if (options.aggregation == EntityAggregation::kMax) {
        size_t best = w;  // the word's token with the highest probability (the first of equals)
        for (size_t k = w + 1; k < end; ++k)
          if (row(tokens[k])[argmax(row(tokens[k]), num_labels)] > row(tokens[best])[argmax(row(tokens[best]), num_labels)])
            best = k;
        item.label = argmax(row(tokens[best]), num_labels);
        item.score = row(tokens[best])[item.label];
      } else {  // kAverage: the label of the mean probabilities
        std::vector<double> mean(width, 0.0);
        for (size_t k = w; k < end; ++k)
          for (size_t l = 0; l < width; ++l) mean[l] += row(tokens[k])[l];
        size_t best = 0;
        for (size_t l = 0; l < width; ++l) {
          mean[l] /= static_cast<double>(end - w);
          if (mean[l] > mean[best]) best = l;
        }
        item.label = static_cast<int>(best);
        item.score = mean[best];
      }
      items.push_back(item);
      w = end;
    }
  }
  if (options.aggregation == EntityAggregation::kNone) {
    for (const Labelled& it : items) emit(labels[static_cast<size_t>(it.label)], it.score, it, it);
    return Status::ok();
  }

  // group_entities: an item joins the group before it when it has the group's last item's tag and
  // is not a "B-"; a group is named after its first item and scored by its items' mean.
  for (size_t g = 0; g < items.size();) {
    size_t end = g + 1;
    double sum = items[g].score;
    while (end < items.size()) {
      const heads::BioTag tag = heads::bio_tag(labels[static_cast<size_t>(items[end].label)]);
      const heads::BioTag last = heads::bio_tag(labels[static_cast<size_t>(items[end - 1].label)]);
      if (tag.tag != last.tag || tag.position == 'B') break;
      sum += items[end].score;
      ++end;
    }
    emit(heads::group_name(labels[static_cast<size_t>(items[g].label)]), sum / static_cast<double>(end - g),
         items[g], items[end - 1]);
    g = end;
  }
  return Status::ok();
}

}  // namespace encrt
