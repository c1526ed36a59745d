// The encrt CLI's sub-commands. Each takes the arguments after its name and returns an exit code.
#pragma once

namespace encrt::cli {

int cmd_convert(int argc, char** argv);
int cmd_run(int argc, char** argv);
int cmd_inspect(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_tune(int argc, char** argv);
int cmd_tokenize(int argc, char** argv);
int cmd_embed(int argc, char** argv);
int cmd_similarity(int argc, char** argv);
int cmd_search(int argc, char** argv);
int cmd_classify(int argc, char** argv);
int cmd_ner(int argc, char** argv);
int cmd_rerank(int argc, char** argv);
int cmd_attention(int argc, char** argv);
int cmd_verify(int argc, char** argv);

}  // namespace encrt::cli
