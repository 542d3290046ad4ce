// Python source as tree-sitter parses it: a parsed file that owns its text
// and tree, and a small view of tree-sitter's nodes (kind, fields, text,
// location) for the interpreter.
#pragma once

#include <tree_sitter/api.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dtype_lint/finding.h"

namespace dtype_lint::python {

class SourceFile;

// A node of a parsed file; null() where a field or child is absent.
class Node {
 public:
  Node() = default;
  Node(TSNode node, const SourceFile* file) : node_(node), file_(file) {}

  bool null() const { return ts_node_is_null(node_); }
  explicit operator bool() const { return !null(); }
  std::string_view kind() const { return null() ? std::string_view() : ts_node_type(node_); }
  bool is(std::string_view k) const { return kind() == k; }
  Node field(const char* name) const;
  // Named children, comments left out.
  std::vector<Node> children() const;
  // Every child, anonymous ones (operators, keywords) included, comments left out.
  std::vector<Node> allChildren() const;
  Node parent() const { return Node(ts_node_parent(node_), file_); }
  std::string_view text() const;
  SourceLocation location() const;
  const SourceFile& file() const { return *file_; }
  // Identity, for maps: the node's start byte within its file.
  uint32_t startByte() const { return ts_node_start_byte(node_); }
  bool operator==(const Node& o) const { return ts_node_eq(node_, o.node_); }

 private:
  TSNode node_{};
  const SourceFile* file_ = nullptr;
};

class SourceFile {
 public:
  // Reads and parses; the error says why not ("cannot read '...': ...").
  static std::unique_ptr<SourceFile> parse(const std::string& path, std::string& error);
  ~SourceFile();
  SourceFile(const SourceFile&) = delete;
  SourceFile& operator=(const SourceFile&) = delete;

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  Node root() const { return Node(ts_tree_root_node(tree_), this); }
  // The first syntax error's line, 0 when the file parsed cleanly.
  unsigned firstErrorLine() const;
  size_t lines() const;

 private:
  SourceFile() = default;
  std::string path_, text_;
  TSTree* tree_ = nullptr;
};

}  // namespace dtype_lint::python
