// tune_backend_options (encrt.hpp): a greedy search over a backend's tunable options
// (backend.h, TuningChoice), each candidate checked against the defaults' hidden state and
// measured side by side with the best options so far.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/registry.h"
#include "core/half.h"
#include "encrt/encrt.hpp"

namespace encrt {

namespace {

// Fixed random ids (every token real), as `encrt bench` makes them.
struct TuneInputs {
  std::vector<int32_t> ids, mask;
  Inputs inputs{};
};
void make_inputs(const Model& model, const TuneOptions& t, TuneInputs* in) {
  std::mt19937 rng(1234);
  const int vocab = model.config().vocab_size;
  std::uniform_int_distribution<int> pick(std::min(1000, vocab - 1), vocab - 1);
  in->ids.resize(static_cast<size_t>(t.batch) * static_cast<size_t>(t.seq));
  in->mask.assign(in->ids.size(), 1);
  for (int32_t& id : in->ids) id = pick(rng);
  in->inputs = Inputs{t.batch, t.seq, in->ids.data(), in->mask.data(), nullptr};
}

// The hidden state of the session's last run in host memory, as floats [rows, hidden].
Status hidden_state(const Session& s, std::vector<float>* out, int* width) {
  OutputInfo info;
  if (Status st = s.output("hidden", &info); !st) return st;
  if (info.shape.empty() || (info.dtype != DType::kF32 && info.dtype != DType::kF16))
    return internal_error("tuning: the hidden state is not an fp32 or fp16 tensor");
  *width = static_cast<int>(info.shape.back());
  const size_t n = info.bytes / dtype_size(info.dtype);
  if (info.dtype == DType::kF32) {
    out->resize(n);
    return s.copy_output("hidden", out->data(), n * sizeof(float));
  }
  std::vector<uint16_t> half(n);
  if (Status st = s.copy_output("hidden", half.data(), n * sizeof(uint16_t)); !st) return st;
  out->resize(n);
  for (size_t i = 0; i < n; ++i) (*out)[i] = half_to_float(half[i]);
  return Status::ok();
}

// The smallest cosine between corresponding rows (tokens) of a and b; a row that is zero in both
// counts as agreeing, a non-finite value or a zero row against a non-zero one as 0 (disagreeing).
double min_row_cosine(const std::vector<float>& a, const std::vector<float>& b, int width) {
  if (a.size() != b.size() || width <= 0) return 0.0;
  double worst = 1.0;
  for (size_t r = 0; r + static_cast<size_t>(width) <= a.size(); r += static_cast<size_t>(width)) {
    double dot = 0, na = 0, nb = 0;
    for (int c = 0; c < width; ++c) {
      const double x = a[r + static_cast<size_t>(c)], y = b[r + static_cast<size_t>(c)];
      dot += x * y, na += x * x, nb += y * y;
    }
    double cosine;
    if (!std::isfinite(dot) || !std::isfinite(na) || !std::isfinite(nb))
      cosine = 0.0;
    else if (na == 0.0 && nb == 0.0)
      cosine = 1.0;
    else if (na == 0.0 || nb == 0.0)
      cosine = 0.0;
    else
      cosine = dot / std::sqrt(na * nb);
    worst = std::min(worst, cosine);
  }
  return worst;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? -1.0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The median time of `iters` runs (device time where the session reports it, else wall).
Status measure(Session& s, const Inputs& in, int iters, bool* device, double* ms) {
  std::vector<double> t;
  t.reserve(static_cast<size_t>(iters));
  for (int i = 0; i < iters; ++i) {
    const auto a = std::chrono::steady_clock::now();
    if (Status st = s.run(in); !st) return st;
    const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    const double dev = s.last_run_device_ms();
    *device = dev >= 0;
    t.push_back(dev >= 0 ? dev : wall);
  }
  *ms = median(std::move(t));
  return Status::ok();
}

// a and b measured alternately, `rounds` times, the first of each round in turn (neither always
// runs after the other): each one's median of its rounds' medians.
Status side_by_side(Session& a, Session& b, const Inputs& in, const TuneOptions& t, bool* device, double* a_ms,
                    double* b_ms) {
  std::vector<double> ra, rb;
  for (int r = 0; r < t.rounds; ++r) {
    double x = 0, y = 0;
    if (r % 2 == 0) {
      if (Status st = measure(a, in, t.iters, device, &x); !st) return st;
      if (Status st = measure(b, in, t.iters, device, &y); !st) return st;
    } else {
      if (Status st = measure(b, in, t.iters, device, &y); !st) return st;
      if (Status st = measure(a, in, t.iters, device, &x); !st) return st;
    }
    ra.push_back(x), rb.push_back(y);
  }
  *a_ms = median(std::move(ra));
  *b_ms = median(std::move(rb));
  return Status::ok();
}

// Creates a session with `options` and runs it a few times (a GPU backend captures its graph on
// the first run of a shape; the warm-up keeps that out of the measurement).
Status warm_session(const Model& model, const SessionOptions& options, const Inputs& in,
                    std::unique_ptr<Session>* out) {
  if (Status st = Session::create(model, options, out); !st) return st;
  for (int i = 0; i < 3; ++i)
    if (Status st = (*out)->run(in); !st) return st;
  return Status::ok();
}

// One candidate: created and warmed up (else "refused", with the reason), its hidden state against
// the defaults' (else "differs"), then timed side by side with the best (a run that fails after
// creation: "failed"); "taken" when faster by min_gain, else "not faster". *s keeps its session.
void evaluate(const Model& model, const SessionOptions& candidate, const Inputs& in, const TuneOptions& t,
              const std::vector<float>& reference, int width, Session& best, std::unique_ptr<Session>* s,
              TuneTrial* trial, bool* device_time) {
  if (Status st = Session::create(model, candidate, s); !st) {
    trial->outcome = "refused";
    trial->detail = st.message();
    return;
  }
  std::vector<float> hidden;
  int w = 0;
  Status st = Status::ok();
  for (int i = 0; i < 3 && st; ++i) st = (*s)->run(in);
  if (st) st = hidden_state(**s, &hidden, &w);
  if (!st) {
    trial->outcome = "failed";
    trial->detail = st.message();
    return;
  }
  trial->min_cosine = min_row_cosine(reference, hidden, width);
  if (!(trial->min_cosine >= t.min_cosine)) {
    trial->outcome = "differs";
    trial->detail = "a token's hidden state has cosine " + std::to_string(trial->min_cosine) +
                    " with the defaults' (below " + std::to_string(t.min_cosine) + ")";
    return;
  }
  if (Status m = side_by_side(best, **s, in, t, device_time, &trial->best_ms, &trial->ms); !m) {
    trial->outcome = "failed";
    trial->detail = m.message();
    trial->ms = trial->best_ms = -1.0;
    return;
  }
  trial->outcome = trial->ms <= trial->best_ms * (1.0 - t.min_gain) ? "taken" : "not faster";
}

// The backend whose options are tuned: the one named, or for auto the first backend of the
// session other than the CPU (the device that runs the model), else the CPU.
std::string tuned_backend(const SessionOptions& base, const Session& s) {
  if (base.backend != "auto") return base.backend;
  for (const BackendUsage& u : s.backends())
    if (u.name != "cpu") return u.name;
  return "cpu";
}

}  // namespace

Status tune_backend_options(const Model& model, const SessionOptions& base, const TuneOptions& t, TuneResult* out) {
  if (!out) return invalid_argument("tune_backend_options: out is null");
  if (t.batch < 1 || t.seq < 1) return invalid_argument("tune_backend_options: batch and seq must be at least 1");
  if (t.iters < 1 || t.iters > 100000 || t.rounds < 1 || t.rounds > 1000)
    return invalid_argument("tune_backend_options: iters must be in [1, 100000] and rounds in [1, 1000]");
  if (!(t.min_cosine >= -1.0 && t.min_cosine <= 1.0) || !(t.min_gain >= 0.0 && t.min_gain < 1.0))
    return invalid_argument("tune_backend_options: min_cosine must be in [-1, 1] and min_gain in [0, 1)");
  if (!(t.max_seconds >= 0.0)) return invalid_argument("tune_backend_options: max_seconds must be 0 (no limit) or more");
  *out = TuneResult{};
  SessionOptions options = base;
  options.max_batch = t.batch;  // sessions planned for the shape they run
  options.max_seq = t.seq;
  TuneInputs in;
  make_inputs(model, t, &in);

  std::unique_ptr<Session> defaults;
  if (Status st = warm_session(model, options, in.inputs, &defaults); !st) return st;
  std::vector<float> reference;
  int width = 0;
  if (Status st = hidden_state(*defaults, &reference, &width); !st) return st;
  out->backend = tuned_backend(base, *defaults);
  for (const BackendUsage& u : defaults->backends())
    if (u.name == out->backend) out->backend_summary = u.summary;
  const backend::BackendInterface* table = nullptr;
  if (Status st = backend::find_backend(out->backend, &table); !st) return st;
  const auto started = std::chrono::steady_clock::now();  // the candidates' time (TuneOptions::max_seconds)

  SessionOptions best = options;
  std::unique_ptr<Session> best_session;  // null: the defaults' session is the best so far
  auto best_now = [&]() -> Session& { return best_session ? *best_session : *defaults; };
  // An option's value in o, or its entry's first value (the backend's own) where o does not set it.
  auto value_of = [&](const SessionOptions& o, const char* key) -> std::string {
    if (const auto set = o.backend_options.find(key); set != o.backend_options.end()) return set->second;
    for (const backend::TuningChoice* c = table->tuning; c && c->key; ++c)
      if (std::string(c->key) == key) return c->values[0];
    return "";
  };
  auto listed = [](const char* const* values, const std::string& v) {
    for (const char* const* x = values; x && *x; ++x)
      if (v == *x) return true;
    return false;
  };
  // One candidate against the best so far; taken: the best from now on. Its trial's outcome; "not
  // tried" (no trial) once the time budget is spent.
  auto attempt = [&](SessionOptions candidate, std::string option) -> std::string {
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (!out->stopped_before.empty() || (t.max_seconds > 0.0 && elapsed >= t.max_seconds)) {
      if (out->stopped_before.empty()) out->stopped_before = option;
      return "not tried";
    }
    TuneTrial trial;
    trial.option = std::move(option);
    std::unique_ptr<Session> s;
    evaluate(model, candidate, in.inputs, t, reference, width, best_now(), &s, &trial, &out->device_time);
    if (trial.outcome == "taken") {
      best = std::move(candidate);
      best_session = std::move(s);
    }
    if (t.progress) t.progress(trial);
    out->trials.push_back(trial);
    return trial.outcome;
  };
  for (const backend::TuningChoice* c = table->tuning; c && c->key; ++c) {
    if (c->parent && !listed(c->parent_values, value_of(best, c->parent))) continue;  // changes nothing here
    for (const char* const* v = c->values; *v; ++v) {
      if (value_of(best, c->key) == *v) continue;  // (a value taken below is the next ones' rival)
      SessionOptions candidate = best;
      candidate.backend_options[c->key] = *v;
      const std::string option = std::string(c->key) + "=" + *v;
      if (attempt(candidate, option) != "not faster") continue;
      // Slower alone, but it runs and agrees: with each value of each option that depends on it.
      bool taken = false;
      for (const backend::TuningChoice* d = c + 1; d->key && !taken; ++d) {
        if (!d->parent || std::string(d->parent) != c->key || !listed(d->parent_values, *v)) continue;
        for (const char* const* w = d->values; *w && !taken; ++w) {
          if (value_of(candidate, d->key) == *w) continue;
          SessionOptions pair = candidate;
          pair.backend_options[d->key] = *w;
          taken = attempt(pair, option + "," + d->key + "=" + *w) == "taken";
        }
      }
    }
  }
  out->options = best.backend_options;
  if (!best_session) {  // nothing taken: the result is the defaults' session, timed once (not against itself)
    double ms = 0.0;
    if (Status st = measure(*defaults, in.inputs, t.iters * t.rounds, &out->device_time, &ms); !st) return st;
    out->default_ms = out->tuned_ms = ms;
    return Status::ok();
  }
  return side_by_side(*defaults, *best_session, in.inputs, t, &out->device_time, &out->default_ms, &out->tuned_ms);
}

}  // namespace encrt
