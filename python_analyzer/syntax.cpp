#include "syntax.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

extern "C" const TSLanguage* tree_sitter_python(void);

namespace dtype_lint::python {

Node Node::field(const char* name) const {
  if (null()) return {};
  return Node(ts_node_child_by_field_name(node_, name, static_cast<uint32_t>(std::strlen(name))), file_);
}

std::vector<Node> Node::children() const {
  std::vector<Node> out;
  if (null()) return out;
  for (uint32_t i = 0, n = ts_node_named_child_count(node_); i < n; ++i) {
    // Extras (comments, a backslash's line continuation) are no part of the syntax.
    const TSNode child = ts_node_named_child(node_, i);
    if (!ts_node_is_extra(child)) out.emplace_back(child, file_);
  }
  return out;
}

std::vector<Node> Node::allChildren() const {
  std::vector<Node> out;
  if (null()) return out;
  for (uint32_t i = 0, n = ts_node_child_count(node_); i < n; ++i) {
    const TSNode child = ts_node_child(node_, i);
    if (!ts_node_is_extra(child)) out.emplace_back(child, file_);
  }
  return out;
}

std::string_view Node::text() const {
  if (null()) return {};
  const uint32_t begin = ts_node_start_byte(node_), end = ts_node_end_byte(node_);
  return std::string_view(file_->text()).substr(begin, end - begin);
}

SourceLocation Node::location() const {
  SourceLocation at;
  at.file = file_->path();
  const TSPoint start = ts_node_start_point(node_), end = ts_node_end_point(node_);
  at.line = start.row + 1;
  at.column = start.column + 1;
  at.endLine = end.row + 1;
  at.endColumn = end.column;  // inclusive, 1-based
  return at;
}

std::unique_ptr<SourceFile> SourceFile::parse(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  std::ostringstream bytes;
  bytes << in.rdbuf();
  std::unique_ptr<SourceFile> file(new SourceFile());
  file->path_ = path;
  file->text_ = bytes.str();
  TSParser* parser = ts_parser_new();
  ts_parser_set_language(parser, tree_sitter_python());
  file->tree_ = ts_parser_parse_string(parser, nullptr, file->text_.data(), static_cast<uint32_t>(file->text_.size()));
  ts_parser_delete(parser);
  if (!file->tree_) {
    error = "cannot parse '" + path + "'";
    return nullptr;
  }
  return file;
}

SourceFile::~SourceFile() {
  if (tree_) ts_tree_delete(tree_);
}

unsigned SourceFile::firstErrorLine() const {
  TSNode node = ts_tree_root_node(tree_);
  if (!ts_node_has_error(node)) return 0;
  // Down the first child that holds the error, to the error itself.
  for (;;) {
    if (ts_node_is_error(node) || ts_node_is_missing(node)) return ts_node_start_point(node).row + 1;
    bool descended = false;
    for (uint32_t i = 0, n = ts_node_child_count(node); i < n; ++i) {
      TSNode child = ts_node_child(node, i);
      if (ts_node_has_error(child)) {
        node = child;
        descended = true;
        break;
      }
    }
    if (!descended) return ts_node_start_point(node).row + 1;
  }
}

size_t SourceFile::lines() const { return static_cast<size_t>(std::count(text_.begin(), text_.end(), '\n')); }

}  // namespace dtype_lint::python
