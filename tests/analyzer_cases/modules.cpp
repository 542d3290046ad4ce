// Modules: parameter dtypes follow ->to(); calls are matmul-family ops
// between the input and the parameters; user modules are followed.
#include <torch/torch.h>

struct MlpImpl : torch::nn::Module {
  MlpImpl() {
    fc1 = register_module("fc1", torch::nn::Linear(8, 8));
    fc2 = register_module("fc2", torch::nn::Linear(8, 2));
  }
  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x));  // dtype-lint-expect: DL101:21 {{'linear' on operands of different dtypes outside autocast (input 'x': Half, the parameters of 'fc1': Float)}}
    return fc2(x);
  }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(Mlp);

struct CastingNet : torch::nn::Module {
  CastingNet() { fc = register_module("fc", torch::nn::Linear(8, 2)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x.to(torch::kFloat)); }
  torch::nn::Linear fc{nullptr};
};

void holder_module() {
  Mlp mlp;
  mlp(torch::randn({2, 8}, torch::kHalf));
  mlp->forward(torch::randn({2, 8}));
}

void module_moved_to_half() {
  auto net = std::make_shared<MlpImpl>();
  net->to(torch::kHalf);
  net->forward(torch::randn({2, 8}, torch::kHalf));
  torch::nn::Linear fc(8, 8);
  fc->to(torch::kBFloat16);
  fc(torch::randn({2, 8}));  // dtype-lint-expect: DL101
  fc->to(torch::kCPU, torch::kFloat);
  fc(torch::randn({2, 8}));
}

void casting_module_is_clean() {
  auto net = std::make_shared<CastingNet>();
  net->forward(torch::randn({2, 8}, torch::kBFloat16));
}

void sequential_and_conv() {
  torch::nn::Sequential seq(torch::nn::Linear(8, 8), torch::nn::ReLU());
  seq->forward(torch::randn({2, 8}, torch::kBFloat16));  // dtype-lint-expect: DL101
  torch::nn::Conv2d conv(torch::nn::Conv2dOptions(3, 8, 3));
  conv->to(torch::kHalf);
  conv(torch::randn({1, 3, 8, 8}));  // dtype-lint-expect: DL101
  conv(torch::randn({1, 3, 8, 8}).to(torch::kHalf));
}

void weights_are_module_dtype() {
  torch::nn::Linear fc(4, 4);
  auto x = torch::randn({2, 4}, torch::kBFloat16);
  torch::matmul(x, fc->weight.t());  // dtype-lint-expect: DL101
  fc->to(torch::kBFloat16);
  torch::matmul(x, fc->weight.t());
}

torch::Tensor apply_layer(torch::nn::Linear& layer, const torch::Tensor& x) {
  return layer(x);  // dtype-lint-expect: DL101
}

void module_through_a_helper() {
  torch::nn::Linear layer(4, 4);
  apply_layer(layer, torch::randn({2, 4}, torch::kHalf));
}

void embedding_takes_indices() {
  torch::nn::Embedding embedding(10, 4);
  embedding(torch::randint(0, 10, {2}));
}

// Lookups into a Half table, as ATen's embedding(weight, indices) and the
// functional embedding(indices, weight) spell them, have the table's dtype;
// a table of unknown dtype makes rows of unknown dtype, not Long ones.
void aten_embedding(const torch::Tensor& ids) {
  auto table = torch::randn({10, 4}, torch::kHalf);
  torch::matmul(torch::embedding(table, ids), torch::randn({4}));  // dtype-lint-expect: DL101
}

void functional_embedding(const torch::Tensor& ids) {
  auto table = torch::randn({10, 4}, torch::kHalf);
  torch::matmul(torch::nn::functional::embedding(ids, table), torch::randn({4}));  // dtype-lint-expect: DL101
}

void embedding_rows_of_an_unknown_or_upcast_table(const torch::Tensor& ids, const torch::Tensor& any_table) {
  auto table = torch::randn({10, 4}, torch::kHalf);
  torch::matmul(torch::embedding(any_table, ids), torch::randn({4}));
  torch::matmul(torch::embedding(table, ids).to(torch::kFloat), torch::randn({4}));
}

void submodule_from_outside() {
  auto net = std::make_shared<MlpImpl>();
  net->fc2(torch::randn({2, 8}, torch::kBFloat16));  // dtype-lint-expect: DL101
  net->to(torch::kBFloat16);
  net->fc2(torch::randn({2, 8}, torch::kBFloat16));
}

// A submodule converted on its own in its parent's constructor keeps its
// dtype in the parent's methods; an embedding's rows have its weight's dtype.
struct EmbeddingConfig {
  c10::ScalarType table_dtype = torch::kHalf;
  int64_t rows = 100;
};

struct TwoTablesImpl : torch::nn::Module {
  explicit TwoTablesImpl(const EmbeddingConfig& cfg) {
    items_ = register_module("items", torch::nn::Embedding(cfg.rows, 8));
    users_ = register_module("users", torch::nn::Embedding(cfg.rows, 8));
    item_tower_ = register_module("item_tower", torch::nn::Linear(8, 4));
    user_tower_ = register_module("user_tower", torch::nn::Linear(8, 4));
    items_->to(cfg.table_dtype);
    users_->to(cfg.table_dtype);
  }
  torch::Tensor encode_items(const torch::Tensor& ids) { return item_tower_(items_(ids)); }  // dtype-lint-expect: DL101
  torch::Tensor encode_users(const torch::Tensor& ids) { return user_tower_(users_(ids).to(torch::kFloat)); }
  torch::nn::Embedding items_{nullptr}, users_{nullptr};
  torch::nn::Linear item_tower_{nullptr}, user_tower_{nullptr};
};
TORCH_MODULE(TwoTables);

// Converting the whole module afterwards brings the submodule back in line.
void tables_converted_together() {
  TwoTables tables(EmbeddingConfig{});
  tables->to(torch::kHalf);
  auto ids = torch::randint(0, 100, {4});
  auto scores = tables->encode_items(ids);
}

void tables_as_built() {
  TwoTables tables(EmbeddingConfig{});
  auto ids = torch::randint(0, 100, {4});
  auto scores = tables->encode_items(ids) + tables->encode_users(ids);
}

// A trainer handed its model converts it in the constructor: in a method
// whose caller is not seen, the model's layers follow the conversion.
struct ProjectionImpl : torch::nn::Module {
  ProjectionImpl() { proj_ = register_module("proj", torch::nn::Linear(8, 8)); }
  torch::Tensor forward(const torch::Tensor& x) { return proj_(x); }
  torch::nn::Linear proj_{nullptr};
};
TORCH_MODULE(Projection);

class HalfRunner {
 public:
  explicit HalfRunner(Projection projection) : projection_(std::move(projection)) { projection_->to(torch::kHalf); }
  torch::Tensor score(const torch::Tensor& x) { return projection_->forward(x.to(torch::kHalf)); }

 private:
  Projection projection_;
};

// A range-for variable has the dtype of what it walks: a module's parameters,
// or the tensors of a list (all of them, or it is left unknown).
void walk_parameters_and_lists() {
  torch::nn::Linear half_layer(8, 8);
  half_layer->to(torch::kHalf);
  torch::nn::Linear float_layer(8, 8);
  auto probe = torch::randn({8, 8});
  for (auto& p : half_layer->parameters())
    if (p.dim() == 2) auto score = torch::mm(p, probe);  // dtype-lint-expect: DL101
  for (auto& p : float_layer->parameters())
    if (p.dim() == 2) auto score = torch::mm(p, probe);
  std::vector<torch::Tensor> halves = {torch::randn({8, 8}, torch::kHalf), torch::randn({8, 8}, torch::kHalf)};
  for (const auto& h : halves) auto score = torch::mm(h, probe);  // dtype-lint-expect: DL101
  std::vector<torch::Tensor> mixed = {torch::randn({8, 8}, torch::kHalf), torch::randn({8, 8})};
  for (const auto& m : mixed) auto score = torch::mm(m, probe);
}

// Lists whose elements change are not trusted afterwards.
void changed_lists() {
  auto probe = torch::randn({8, 8});
  std::vector<torch::Tensor> grown = {torch::randn({8, 8}, torch::kHalf)};
  grown.push_back(torch::randn({8, 8}));
  for (const auto& g : grown) auto score = torch::mm(g, probe);
  std::vector<torch::Tensor> replaced = {torch::randn({8, 8}, torch::kHalf)};
  replaced[0] = torch::randn({8, 8});
  for (const auto& r : replaced) auto score = torch::mm(r, probe);
  std::vector<torch::Tensor> upcast = {torch::randn({8, 8}, torch::kHalf)};
  for (auto& u : upcast) u = u.to(torch::kFloat);
  auto score = torch::mm(upcast[0], probe);
}

// A copy converted by hand, parameter by parameter (an EMA or inference copy):
// `set_data(src.to(dtype))` over its parameters converts it like ->to(dtype).
void copies_converted_by_hand(torch::nn::Linear& trained) {
  torch::NoGradGuard no_grad;
  torch::nn::Linear half_copy(8, 2);
  auto sources = trained->named_parameters();
  for (auto& item : half_copy->named_parameters()) item.value().set_data(sources[item.key()].to(torch::kHalf));
  half_copy(torch::randn({4, 8}).to(torch::kHalf));
  half_copy(torch::randn({4, 8}));  // dtype-lint-expect: DL101
  torch::nn::Linear float_copy(8, 2);
  for (auto& p : float_copy->parameters()) p.set_data(p.to(torch::kFloat));
  float_copy(torch::randn({4, 8}));
}

// Helpers that convert the module they are given: through a reference to the
// base class (a set_data loop over named_parameters, as a checkpoint tool
// writes it), or a holder passed by value (it shares the module). The caller's
// module is converted; a helper that only reads one is no conversion.
void cast_parameters(torch::nn::Module& module, torch::Dtype dtype) {
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters(/*recurse=*/true)) {
    auto& p = item.value();
    if (p.is_floating_point()) p.set_data(p.to(dtype));
  }
}

void to_half(torch::nn::Linear layer) { layer->to(torch::kHalf); }

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t n = 0;
  for (const auto& p : module.parameters()) n += p.numel();
  return n;
}

void converted_by_helpers() {
  torch::nn::Linear encoder(8, 8), head(8, 2), probe(8, 2);
  cast_parameters(*encoder, torch::kHalf);
  auto features = encoder(torch::randn({4, 8}));  // dtype-lint-expect: DL101
  to_half(head);
  auto logits = head(torch::randn({4, 8}));  // dtype-lint-expect: DL101
  count_parameters(*probe);
  auto scores = probe(torch::randn({4, 8}));
}

// A field of every module in a container replaced in a loop (a LoRA base
// frozen in low precision): that field has its new dtype; the module's other
// fields keep theirs.
struct AdaptedLinearImpl : torch::nn::Module {
  AdaptedLinearImpl() {
    base = register_parameter("base", torch::randn({8, 8}), /*requires_grad=*/false);
    adapter = register_parameter("adapter", torch::randn({8, 8}));
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto frozen = torch::mm(x, base);
    return torch::mm(frozen, adapter);  // dtype-lint-expect: DL101
  }
  torch::Tensor base, adapter;
};
TORCH_MODULE(AdaptedLinear);

struct AdaptedStackImpl : torch::nn::Module {
  AdaptedStackImpl() {
    for (int i = 0; i < 2; ++i) layers.push_back(register_module("layer" + std::to_string(i), AdaptedLinear()));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& layer : layers) x = x + layer(x);
    return x;
  }
  std::vector<AdaptedLinear> layers;
};
TORCH_MODULE(AdaptedStack);

struct AdapterTrainer {
  AdaptedStack stack;
  AdapterTrainer() {
    for (auto& layer : stack->layers) layer->base.set_data(layer->base.to(torch::kHalf));
  }
  torch::Tensor step(const torch::Tensor& x) { return stack(x); }
};

void field_replaced_in_a_loop() {
  AdapterTrainer trainer;
  trainer.step(torch::randn({4, 8}, torch::kHalf));
}

// A model passed in by reference may have been converted by whoever built it
// (a builder in another file): its submodules' dtype is not the Float its
// constructor made, so a BFloat16 input is not judged against it.
struct RoutedBlockImpl : torch::nn::Module {
  RoutedBlockImpl() { router = register_module("router", torch::nn::Linear(8, 4)); }
  torch::Tensor forward(const torch::Tensor& x) { return torch::softmax(router(x).to(torch::kFloat), -1); }
  torch::nn::Linear router{nullptr};
};
TORCH_MODULE(RoutedBlock);

torch::Tensor route_with_a_converted_model(RoutedBlock& block) {
  return block(torch::randn({2, 8}).to(torch::kBFloat16));
}

// A model converted whole: the modules of its lists (a GPT's blocks) and
// their own submodules are converted with it.
struct AttentionImpl : torch::nn::Module {
  AttentionImpl() : qkv(register_module("qkv", torch::nn::Linear(8, 24))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    auto parts = qkv(x).chunk(3, -1);
    auto scores = torch::bmm(parts[0], parts[1].transpose(1, 2));
    auto context = torch::empty({x.size(0), x.size(1), 8});
    at::bmm_out(context, torch::softmax(scores, -1, torch::kFloat).to(scores.scalar_type()), parts[2]);  // dtype-lint-expect: DL102:5 {{'bmm_out' writes a Half result into a Float destination 'context'}}
    return context;
  }
  torch::nn::Linear qkv;
};
TORCH_MODULE(Attention);

struct StackedBlockImpl : torch::nn::Module {
  StackedBlockImpl() : attn(register_module("attn", Attention())) {}
  torch::Tensor forward(torch::Tensor x) { return x + attn(x).to(x.scalar_type()); }
  Attention attn;
};
TORCH_MODULE(StackedBlock);

struct TinyDecoderImpl : torch::nn::Module {
  TinyDecoderImpl() {
    for (int i = 0; i < 2; ++i) blocks.push_back(register_module("h" + std::to_string(i), StackedBlock()));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& block : blocks) x = block(x);
    return x;
  }
  std::vector<StackedBlock> blocks;
};
TORCH_MODULE(TinyDecoder);

void decoder_converted_whole() {
  TinyDecoder decoder;
  decoder->to(torch::kHalf);
  decoder(torch::randn({2, 4, 8}, torch::kHalf));
}

// A torch::nn::ModuleList walked with `block->as<Impl>()`: its elements were
// converted with the model, whatever their constructor made; the Float input
// meets them inside their forward: the call handing it in is reported.
struct ListedConvImpl : torch::nn::Module {
  ListedConvImpl() : conv(register_module("conv", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, 3, 3).padding(1)))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return torch::relu(conv(x));
  }
  torch::nn::Conv2d conv;
};
TORCH_MODULE(ListedConv);

struct ListedCnnImpl : torch::nn::Module {
  ListedCnnImpl() {
    blocks = register_module("blocks", torch::nn::ModuleList());
    for (int i = 0; i < 3; ++i) blocks->push_back(ListedConv());
  }
  torch::Tensor forward(torch::Tensor x) {
    for (const auto& block : *blocks) x = block->as<ListedConvImpl>()->forward(x);
    return x;
  }
  torch::nn::ModuleList blocks;
};
TORCH_MODULE(ListedCnn);

void module_list_of_a_half_model(const torch::Tensor& images) {
  ListedCnn model;
  model->to(torch::kHalf);
  model->forward(images.to(torch::kFloat));  // dtype-lint-expect: DL101 {{input 'x': Float, the parameters of 'conv': Half}}
}

// A user module inside a listed block (attention inside a transformer block):
// converted with the model too, whatever its constructor made. The Half
// model's Half activations meet Half parameters throughout (set AG p22).
struct ListedProjectionImpl : torch::nn::Module {
  ListedProjectionImpl() : proj(register_module("proj", torch::nn::Linear(8, 8))) {}
  torch::Tensor forward(const torch::Tensor& x) { return proj(x); }
  torch::nn::Linear proj;
};
TORCH_MODULE(ListedProjection);

struct ListedBlockImpl : torch::nn::Module {
  ListedBlockImpl()
      : attn(register_module("attn", ListedProjection())), mlp(register_module("mlp", torch::nn::Linear(8, 8))) {}
  torch::Tensor forward(torch::Tensor x) {
    x = x + attn(x);
    return x + mlp(x);
  }
  ListedProjection attn;
  torch::nn::Linear mlp;
};
TORCH_MODULE(ListedBlock);

struct ListedStackImpl : torch::nn::Module {
  ListedStackImpl() : head(register_module("head", torch::nn::Linear(8, 2))) {
    for (int i = 0; i < 2; ++i) blocks->push_back(ListedBlock());
    register_module("blocks", blocks);
  }
  torch::Tensor forward(const torch::Tensor& x) {
    auto h = x;
    for (const auto& b : *blocks) h = b->as<ListedBlock>()->forward(h);
    return head(h);
  }
  torch::nn::ModuleList blocks;
  torch::nn::Linear head;
};
TORCH_MODULE(ListedStack);

void listed_stack_served_in_half(const torch::Tensor& x) {
  ListedStack served;
  served->to(torch::kHalf);
  auto logits = served->forward(x.to(torch::kHalf));
  auto probs = torch::softmax(logits, -1, torch::kFloat);
}

// A module whose forward raises, called in a loop: the next iteration's input
// is still the Float one, not a mix of it and the module's output. The call
// handing it in is reported.
struct LoopedBlockImpl : torch::nn::Module {
  LoopedBlockImpl() : fc(register_module("fc", torch::nn::Linear(4, 4))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    return fc(x);
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(LoopedBlock);

void half_block_in_a_loop(int steps) {
  LoopedBlock block;
  block->to(torch::kHalf);
  auto x = torch::randn({2, 4});
  for (int i = 0; i < steps; ++i) x = block(x);  // dtype-lint-expect: DL101 {{input 'x': Float, the parameters of 'fc': Half}}
}

// A model's std::vector of layers is walked at least once: after the loop the
// activations are what the Half layers made, and the Float head meets them.
struct LayerStackImpl : torch::nn::Module {
  explicit LayerStackImpl(int depth) {
    for (int i = 0; i < depth; ++i) layers.push_back(register_module("l" + std::to_string(i), torch::nn::Linear(4, 4)));
    head = register_module("head", torch::nn::Linear(4, 2));
  }
  torch::Tensor forward(torch::Tensor x) {
    for (auto& layer : layers) x = layer(x);
    return head(x);  // dtype-lint-expect: DL101 {{input 'x': Half, the parameters of 'head': Float}}
  }
  std::vector<torch::nn::Linear> layers;
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(LayerStack);

void half_layers_float_head(int depth) {
  LayerStack model(depth);
  for (auto& layer : model->layers) layer->to(torch::kHalf);
  model(torch::randn({2, 4}, torch::kHalf));
}

// A Sequential of the model's own blocks (`blocks->push_back(Block(...))`, a
// GPT's stack) runs their forward, in the dtype the model was converted to
// after the blocks were built.
struct SoftmaxBlockImpl : torch::nn::Module {
  explicit SoftmaxBlockImpl(int64_t dim) : fc(register_module("fc", torch::nn::Linear(dim, dim))) {}
  torch::Tensor forward(torch::Tensor x) {
    return torch::softmax(fc(x), -1);  // dtype-lint-expect: DL105 {{'softmax' computed in Half outside autocast}}
  }
  torch::nn::Linear fc;
};
TORCH_MODULE(SoftmaxBlock);

struct BlockStackImpl : torch::nn::Module {
  explicit BlockStackImpl(int depth) {
    blocks = register_module("blocks", torch::nn::Sequential());
    for (int i = 0; i < depth; ++i) blocks->push_back(SoftmaxBlock(4));
  }
  torch::Tensor forward(torch::Tensor x) { return blocks->forward(x); }
  torch::nn::Sequential blocks{nullptr};
};
TORCH_MODULE(BlockStack);

void half_block_stack(int depth) {
  BlockStack model(depth);
  model->to(torch::kHalf);
  model(torch::randn({2, 4}, torch::kHalf));
}

// Two objects of one class: converting the trunk of the served copy names the
// field both share. Whose trunk changed is not followed, so the trained
// model's trunk is not taken for Half.
struct TrunkHeadsImpl : torch::nn::Module {
  TrunkHeadsImpl() {
    trunk = register_module("trunk", torch::nn::Linear(8, 8));
    head = register_module("head", torch::nn::Linear(8, 2));
  }
  torch::Tensor features(const torch::Tensor& x) { return torch::relu(trunk->forward(x)); }
  torch::nn::Linear trunk{nullptr}, head{nullptr};
};
TORCH_MODULE(TrunkHeads);

void serve_a_half_trunk() {
  TrunkHeads model;
  TrunkHeads served;
  served->trunk->to(torch::kHalf);
  auto x = torch::randn({4, 8});
  auto reference = model->head(model->features(x));
  auto feats = torch::relu(served->trunk->forward(x.to(torch::kHalf)));
}
