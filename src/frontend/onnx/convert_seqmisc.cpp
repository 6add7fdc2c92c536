// Recurrent nets (RNN, GRU, LSTM), NonMaxSuppression, the QuantizeLinear
// family, Einsum, GridSample and RoiAlign onto our layers (src/ops/recurrent/,
// detection/, quant/, matmul/einsum.cpp, resample/grid_sample.cpp), and
// TfIdfVectorizer, StringNormalizer (text/).
#include <algorithm>
#include <cctype>
#include <map>

#include "frontend/onnx/converter.h"
#include "frontend/onnx/onnx_tensor.h"

namespace kestrel::onnx_import {

namespace {

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

// Outputs up to the last present one; absent ones before it get fresh names.
std::vector<std::string> outputs_with_placeholders(NodeContext& n)
{
    int last = -1;
    for (int i = 0; i < n.num_outputs(); ++i)
        if (n.has_output(i)) last = i;
    n.check(last >= 0, "has no outputs");
    std::vector<std::string> tops;
    for (int i = 0; i <= last; ++i) tops.push_back(n.has_output(i) ? n.output(i) : n.temp("unused" + std::to_string(i)));
    return tops;
}

std::vector<std::string> attr_strings(const NodeContext& n, const std::string& name)
{
    for (const auto& a : n.node().attribute())
        if (a.name() == name) return std::vector<std::string>(a.strings().begin(), a.strings().end());
    return {};
}

// ---- RNN, GRU, LSTM ------------------------------------------------------------

// One recurrent activation: its code in nd_recurrent.cpp, whether it takes
// alpha / beta, and ONNX's defaults for them.
struct RecurrentActivation {
    int code;
    int params; // 0: none, 1: alpha, 2: alpha and beta
    float alpha, beta;
};

const std::map<std::string, RecurrentActivation>& recurrent_activations()
{
    static const std::map<std::string, RecurrentActivation> m = {
        {"sigmoid", {0, 0, 0.f, 0.f}},        {"tanh", {1, 0, 0.f, 0.f}},          {"relu", {2, 0, 0.f, 0.f}},
        {"affine", {3, 2, 1.f, 0.f}},         {"leakyrelu", {4, 1, 0.01f, 0.f}},   {"thresholdedrelu", {5, 1, 1.f, 0.f}},
        {"scaledtanh", {6, 2, 1.f, 1.f}},     {"hardsigmoid", {7, 2, 0.2f, 0.5f}}, {"elu", {8, 1, 1.f, 0.f}},
        {"softsign", {9, 0, 0.f, 0.f}},       {"softplus", {10, 0, 0.f, 0.f}},
    };
    return m;
}

// Activations with their alpha/beta: activation_alpha and activation_beta are
// consumed in order by the activations that take them.
void set_recurrent_activations(NodeContext& n, ParamDict& pd)
{
    if (!n.has_attr("activations")) return;
    const std::vector<float> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
    size_t next_alpha = 0, next_beta = 0;
    std::vector<int> codes;
    std::vector<float> a, b;
    for (const std::string& name : attr_strings(n, "activations")) {
        const auto it = recurrent_activations().find(lower(name));
        n.check(it != recurrent_activations().end(), "activation '", name, "' is not supported");
        const RecurrentActivation& act = it->second;
        codes.push_back(act.code);
        a.push_back(act.params >= 1 && next_alpha < alphas.size() ? alphas[next_alpha++] : act.alpha);
        b.push_back(act.params >= 2 && next_beta < betas.size() ? betas[next_beta++] : act.beta);
    }
    pd.set_ints(26, codes);
    pd.set_floats(27, a);
    pd.set_floats(28, b);
}

void convert_recurrent(NodeContext& n)
{
    const DType* t = n.input_dtype(0);
    n.check(t == nullptr || *t == DType::F32, "only float32 recurrent nets are supported");
    ParamDict pd;
    pd.set_int(20, 1); // the ONNX form: params from 21
    pd.set_int(21, static_cast<int>(n.attr_int("hidden_size", 0)));
    const std::map<std::string, int> directions = {{"forward", 0}, {"reverse", 1}, {"bidirectional", 2}};
    const std::string direction = n.attr_string("direction", "forward");
    n.check(directions.count(direction), "direction '", direction, "' is not forward, reverse or bidirectional");
    pd.set_int(22, directions.at(direction));
    pd.set_int(23, static_cast<int>(n.attr_int("layout", 0)));
    if (n.has_attr("clip")) {
        const float clip = n.attr_float("clip", 0.f);
        n.check(clip > 0.f, "clip must be > 0, got ", clip);
        pd.set_float(24, clip);
    }
    if (n.op_type() == "GRU") pd.set_int(25, n.attr_int("linear_before_reset", 0) != 0 ? 1 : 0);
    n.check(n.attr_int("input_forget", 0) == 0, "input_forget is not supported");
    set_recurrent_activations(n, pd);
    const bool lstm = n.op_type() == "LSTM";
    n.emit(n.op_type(), inputs_upto(n, lstm ? 8 : 6), outputs_with_placeholders(n), pd);
}

// ---- NonMaxSuppression ---------------------------------------------------------

void convert_nms(NodeContext& n)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(n.attr_int("center_point_box", 0)));
    n.emit("NonMaxSuppression", inputs_upto(n, 5), {n.output(0)}, pd);
}

// ---- QuantizeLinear, DequantizeLinear (onto Quantize / Dequantize, 20=1), DynamicQuantizeLinear ----

void convert_quantize_linear(NodeContext& n)
{
    n.check(n.attr_int("block_size", 0) == 0, "blocked quantization (block_size) is not supported");
    const bool quantize = n.op_type() == "QuantizeLinear";
    ParamDict pd;
    pd.set_int(20, 1);
    pd.set_int(21, static_cast<int>(n.attr_int("axis", 1)));
    if (quantize && n.has_attr("output_dtype") && n.attr_int("output_dtype", 0) != 0)
        pd.set_int(22, static_cast<int>(dtype_from_onnx(static_cast<int>(n.attr_int("output_dtype", 0)), "output_dtype")));
    n.emit(quantize ? "Quantize" : "Dequantize", inputs_upto(n, 3), {n.output(0)}, pd);
}

void convert_dynamic_quantize_linear(NodeContext& n)
{
    n.emit("DynamicQuantizeLinear", {n.input(0)}, outputs_with_placeholders(n));
}

// ---- Einsum, GridSample, RoiAlign -------------------------------------------------

void convert_einsum(NodeContext& n)
{
    std::string eq = n.attr_string("equation");
    eq.erase(std::remove_if(eq.begin(), eq.end(), [](unsigned char c) { return std::isspace(c); }), eq.end());
    n.check(!eq.empty(), "the equation attribute is missing");
    ParamDict pd;
    pd.set_string(0, eq);
    std::vector<std::string> bottoms;
    for (int i = 0; i < n.num_inputs(); ++i) bottoms.push_back(n.input(i));
    n.emit("Einsum", bottoms, {n.output(0)}, pd);
}

void convert_grid_sample(NodeContext& n)
{
    const std::map<std::string, int> modes = {{"bilinear", 0}, {"linear", 0}, {"nearest", 1}, {"bicubic", 2}, {"cubic", 2}};
    const std::map<std::string, int> paddings = {{"zeros", 0}, {"border", 1}, {"reflection", 2}};
    const std::string mode = n.attr_string("mode", n.opset() >= 20 ? "linear" : "bilinear");
    const std::string padding = n.attr_string("padding_mode", "zeros");
    n.check(modes.count(mode), "mode '", mode, "' is not supported");
    n.check(paddings.count(padding), "padding_mode '", padding, "' is not supported");
    n.check(n.input_rank(0) < 0 || n.input_rank(0) == 4 || n.input_rank(0) == 5, "only 4-D (N, C, H, W) and 5-D (N, C, D, H, W) inputs are supported");
    ParamDict pd;
    pd.set_int(0, modes.at(mode) + 1); // ncnn's codes count from 1
    pd.set_int(1, paddings.at(padding) + 1);
    pd.set_int(2, n.attr_int("align_corners", 0) != 0 ? 1 : 0);
    pd.set_int(20, 1); // ONNX's rounding of nearest
    n.emit("GridSample", {n.input(0), n.input(1)}, {n.output(0)}, pd);
}

void convert_roi_align(NodeContext& n)
{
    const std::string mode = n.attr_string("mode", "avg");
    n.check(mode == "avg" || mode == "max", "mode '", mode, "' is not avg or max");
    // Opset 10 had no attribute and behaved as output_half_pixel.
    const std::string coords =
        n.attr_string("coordinate_transformation_mode", n.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    n.check(coords == "half_pixel" || coords == "output_half_pixel", "coordinate_transformation_mode '", coords,
            "' is not supported");
    ParamDict pd;
    pd.set_int(20, 1); // ROIAlign's ONNX form
    pd.set_int(21, static_cast<int>(n.attr_int("output_height", 1)));
    pd.set_int(22, static_cast<int>(n.attr_int("output_width", 1)));
    pd.set_int(23, static_cast<int>(n.attr_int("sampling_ratio", 0)));
    pd.set_float(24, n.attr_float("spatial_scale", 1.f));
    pd.set_int(25, mode == "max" ? 1 : 0);
    pd.set_int(26, coords == "half_pixel" ? 1 : 0);
    n.emit("ROIAlign", {n.input(0), n.input(1), n.input(2)}, {n.output(0)}, pd);
}

// TfIdfVectorizer of integer tokens (src/ops/text/tfidf_vectorizer.cpp): the
// pool and weights as typed weights, the counts and indexes as params.
void convert_tfidf_vectorizer(NodeContext& n)
{
    n.check(!n.has_attr("pool_strings"), "string pools are not supported (Kestrel has no string tensors)");
    const std::vector<int64_t> pool = n.attr_ints("pool_int64s");
    const std::vector<float> weights = n.attr_floats("weights");
    const std::string mode = n.attr_string("mode");
    n.check(mode == "TF" || mode == "IDF" || mode == "TFIDF", "mode must be TF, IDF or TFIDF, got '", mode, "'");
    n.check(pool.size() < static_cast<size_t>(INT32_MAX), "a pool of ", pool.size(), " values");
    ParamDict pd;
    pd.set_int(0, static_cast<int>(n.attr_int("min_gram_length", 1)));
    pd.set_int(1, static_cast<int>(n.attr_int("max_gram_length", 1)));
    pd.set_int(2, static_cast<int>(n.attr_int("max_skip_count", 0)));
    pd.set_int(3, mode == "TF" ? 0 : mode == "IDF" ? 1 : 2);
    const auto as_ints = [](const std::vector<int64_t>& v) { return std::vector<int>(v.begin(), v.end()); };
    pd.set_ints(4, as_ints(n.attr_ints("ngram_counts")));
    pd.set_ints(5, as_ints(n.attr_ints("ngram_indexes")));
    pd.set_int(6, static_cast<int>(pool.size()));
    pd.set_int(7, static_cast<int>(weights.size()));
    Tensor pool_values({static_cast<int64_t>(pool.size())}, DType::I64);
    std::copy(pool.begin(), pool.end(), pool_values.data<int64_t>());
    std::vector<Tensor> w = {pool_values};
    if (!weights.empty()) {
        Tensor wt({static_cast<int64_t>(weights.size())}, DType::F32);
        std::copy(weights.begin(), weights.end(), wt.data<float>());
        w.push_back(wt);
    }
    n.emit("TfIdfVectorizer", {n.input(0)}, {n.output(0)}, pd, w);
}

// StringNormalizer (src/ops/text/string_normalizer.cpp): the stopwords as a
// string weight.
void convert_string_normalizer(NodeContext& n)
{
    const std::string action = n.attr_string("case_change_action", "NONE");
    n.check(action == "NONE" || action == "LOWER" || action == "UPPER",
            "case_change_action must be NONE, LOWER or UPPER, got '", action, "'");
    const std::vector<std::string> stopwords = attr_strings(n, "stopwords");
    n.check(stopwords.size() < static_cast<size_t>(INT32_MAX), stopwords.size(), " stopwords");
    ParamDict pd;
    pd.set_int(0, action == "NONE" ? 0 : action == "LOWER" ? 1 : 2);
    pd.set_int(1, n.attr_int("is_case_sensitive", 0) != 0 ? 1 : 0);
    pd.set_int(2, static_cast<int>(stopwords.size()));
    std::vector<Tensor> w;
    if (!stopwords.empty()) w.push_back(Tensor::strings({static_cast<int64_t>(stopwords.size())}, stopwords));
    n.emit("StringNormalizer", {n.input(0)}, {n.output(0)}, pd, w);
}

} // namespace

std::vector<ConverterEntry> seqmisc_converters()
{
    return {
        {"RNN", convert_recurrent},
        {"GRU", convert_recurrent},
        {"LSTM", convert_recurrent},
        {"NonMaxSuppression", convert_nms},
        {"QuantizeLinear", convert_quantize_linear},
        {"DequantizeLinear", convert_quantize_linear},
        {"DynamicQuantizeLinear", convert_dynamic_quantize_linear},
        {"Einsum", convert_einsum},
        {"GridSample", convert_grid_sample},
        {"RoiAlign", convert_roi_align},
        {"TfIdfVectorizer", convert_tfidf_vectorizer},
        {"StringNormalizer", convert_string_normalizer},
    };
}

} // namespace kestrel::onnx_import
