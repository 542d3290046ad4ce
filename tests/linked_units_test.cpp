// Which files a TU is analyzed with so that its calls into other files are
// followed (analyzer/linked_units.h).
#include <gtest/gtest.h>

#include "linked_units.h"

namespace dtype_lint::analyzer {
namespace {

using Files = std::vector<std::vector<size_t>>;

TEST(LinkedFiles, CallsAreFollowedIntoTheFilesDefiningThemTransitively) {
  const std::vector<std::string> files{"/p/main.cpp", "/p/trainer.cpp", "/p/model.cpp", "/p/unrelated.cpp"};
  const std::vector<Linkage> linkage{
      {{"c:@F@main#"}, {"c:@S@Trainer@F@fit#"}},
      {{"c:@S@Trainer@F@fit#"}, {"c:@F@build_model#"}},
      {{"c:@F@build_model#"}, {}},
      {{"c:@F@other#"}, {"c:@F@undefined_anywhere#"}},
  };
  EXPECT_EQ(linkedFiles(files, linkage, 8), (Files{{1, 2}, {2}, {}, {}}));
}

// Two programs in one tree both define Trainer::fit: each caller is linked
// to the definition in its own directory; when no directory is nearer, to none.
TEST(LinkedFiles, OfSeveralDefinitionsTheNearestIsTakenAndATieIsNotFollowed) {
  const std::vector<std::string> files{"/r/a/main.cpp", "/r/a/trainer.cpp", "/r/b/trainer.cpp", "/r/main.cpp"};
  const std::string fit = "c:@S@Trainer@F@fit#";
  const std::vector<Linkage> linkage{{{}, {fit}}, {{fit}, {}}, {{fit}, {}}, {{}, {fit}}};
  EXPECT_EQ(linkedFiles(files, linkage, 8), (Files{{1}, {}, {}, {}}));
}

TEST(LinkedFiles, AtMostTheGivenNumberOfFilesAreLinked) {
  std::vector<std::string> files{"/p/main.cpp"};
  std::vector<Linkage> linkage{{}};
  for (int i = 0; i < 5; ++i) {
    files.push_back("/p/f" + std::to_string(i) + ".cpp");
    linkage[0].calls.push_back("c:@F@f" + std::to_string(i) + "#");
    linkage.push_back({{"c:@F@f" + std::to_string(i) + "#"}, {}});
  }
  EXPECT_EQ(linkedFiles(files, linkage, 3)[0], (std::vector<size_t>{1, 2, 3}));
}

TEST(LinkedFiles, LinkedFilesAreIncludedAfterTheCallersText) {
  EXPECT_EQ(withLinkedFiles("int main() {}", {"/p/a.cpp", "/p/b.cpp"}),
            "int main() {}\n#include \"/p/a.cpp\"\n#include \"/p/b.cpp\"\n");
}

}  // namespace
}  // namespace dtype_lint::analyzer
