// Helpers for tests that run one layer: building small tensors, reading
// values back, catching kestrel::Error messages, a Net of Input/Constant
// layers feeding the layer under test, and running an in-memory ONNX model
// (tests/test_nd_ops.cpp, tests/test_seqmisc.cpp).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kestrel/kestrel.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#include "onnx/onnx_pb.h"
#endif

namespace kestrel::layer_test {

inline std::string error_of(const std::function<void()>& fn)
{
    try {
        fn();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

template <class T> Tensor make(const Shape& s, DType t, const std::vector<T>& v)
{
    Tensor x(s, t);
    EXPECT_EQ(static_cast<int64_t>(v.size()), x.numel());
    std::copy(v.begin(), v.end(), x.data<T>());
    return x;
}
inline Tensor f32(const Shape& s, const std::vector<float>& v) { return make<float>(s, DType::F32, v); }
inline Tensor i64(const Shape& s, const std::vector<int64_t>& v) { return make<int64_t>(s, DType::I64, v); }
inline Tensor i64v(const std::vector<int64_t>& v) { return i64({static_cast<int64_t>(v.size())}, v); }
inline Tensor i32v(const std::vector<int32_t>& v) { return make<int32_t>({static_cast<int64_t>(v.size())}, DType::I32, v); }

// Uniform random floats in [lo, hi), the same for the same seed.
inline Tensor random_f32(const Shape& s, unsigned seed, float lo = -2.f, float hi = 2.f)
{
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    Tensor t(s, DType::F32);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = dist(rng);
    return t;
}

template <class T> std::vector<T> values(const Tensor& t)
{
    return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

inline ParamDict constant_params(const Tensor& t)
{
    ParamDict pd;
    pd.set_int(0, static_cast<int>(t.dtype()));
    std::vector<int> dims(t.shape().begin(), t.shape().end());
    if (!dims.empty()) pd.set_ints(1, dims);
    return pd;
}

// An input of the layer under test: a graph input fed at run time, or a
// Constant layer (known while planning). A plain Tensor converts to a
// run-time input.
struct In {
    In(Tensor tensor, bool is_constant = false) : t(std::move(tensor)), constant(is_constant) {}
    Tensor t;
    bool constant = false;
};
inline In C(const Tensor& t) { return In{t, true}; }
inline In R(const Tensor& t) { return In{t, false}; }

// A net of Input / Constant layers "in0".. feeding the layer under test "op"
// with tops "out0"...
inline Net layer_net(const std::string& type, const ParamDict& pd, const std::vector<In>& ins, int outputs = 1,
                     const std::vector<Tensor>& weights = {})
{
    Net net;
    std::vector<std::string> names, tops;
    for (size_t i = 0; i < ins.size(); ++i) {
        names.push_back("in" + std::to_string(i));
        if (ins[i].constant)
            net.add_layer("Constant", names.back(), {}, {names.back()}, constant_params(ins[i].t), {ins[i].t});
        else
            net.add_layer("Input", names.back(), {}, {names.back()});
    }
    for (int i = 0; i < outputs; ++i) tops.push_back("out" + std::to_string(i));
    net.add_layer(type, "op", names, tops, pd, weights);
    net.finish_graph();
    return net;
}

// The outputs of layer_net's net run with `opt`; `device`, when given, says
// where the layer ran (Session::layer_devices).
inline std::vector<Tensor> run_layer_net(const Net& net, const std::vector<In>& ins, int outputs, const Options& opt,
                                         std::string* device = nullptr)
{
    Session s(net, opt);
    std::vector<std::string> tops;
    for (size_t i = 0; i < ins.size(); ++i)
        if (!ins[i].constant) s.set_input("in" + std::to_string(i), ins[i].t);
    for (int i = 0; i < outputs; ++i) tops.push_back("out" + std::to_string(i));
    std::vector<Tensor> out = s.run(tops);
    if (device) *device = s.layer_devices().at("op");
    return out;
}

inline std::vector<Tensor> run_layer(const std::string& type, const ParamDict& pd, const std::vector<In>& ins,
                                     int outputs = 1, const std::vector<Tensor>& weights = {}, int threads = 1)
{
    Options opt;
    opt.threads = threads;
    return run_layer_net(layer_net(type, pd, ins, outputs, weights), ins, outputs, opt);
}
inline Tensor run1(const std::string& type, const ParamDict& pd, const std::vector<In>& ins,
                   const std::vector<Tensor>& weights = {})
{
    return run_layer(type, pd, ins, 1, weights)[0];
}

inline ParamDict P(std::initializer_list<std::pair<int, int>> kv)
{
    ParamDict pd;
    for (auto [k, v] : kv) pd.set_int(k, v);
    return pd;
}

// pd with int array param `id` set to v.
inline ParamDict with_ints(ParamDict pd, int id, std::vector<int> v)
{
    pd.set_ints(id, std::move(v));
    return pd;
}

// Every value of a float32 tensor within `rel` relative (at least that much
// absolute) of a reference computed in double.
inline void expect_near_all(const Tensor& got, const std::vector<double>& want, const std::string& what,
                            double rel = 1e-5)
{
    ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size())) << what;
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got.data<float>()[i], want[i], rel * std::max(1.0, std::fabs(want[i]))) << what << " at " << i;
}

// Multi-index (outermost first) of linear index i in shape s, and back.
inline std::vector<int64_t> coords(const Shape& s, int64_t i)
{
    std::vector<int64_t> c(s.size());
    for (size_t k = s.size(); k-- > 0;) {
        c[k] = i % s[k];
        i /= s[k];
    }
    return c;
}
inline int64_t linear(const Shape& s, const std::vector<int64_t>& c)
{
    int64_t i = 0;
    for (size_t k = 0; k < s.size(); ++k) i = i * s[k] + c[k];
    return i;
}

#ifdef KESTREL_HAVE_ONNX
// Converts an in-memory ONNX model and runs it on inputs given in graph order;
// returns the graph outputs.
inline std::vector<Tensor> run_model(const onnx::ModelProto& m, const std::vector<Tensor>& inputs)
{
    const std::string bytes = m.SerializeAsString();
    Net net;
    load_onnx_mem(net, bytes.data(), bytes.size(), "test.onnx");
    Session s(net);
    const std::vector<std::string> names = net.input_names();
    for (size_t i = 0; i < inputs.size(); ++i) s.set_input(names[i], inputs[i]);
    return s.run(net.output_names());
}
#endif

} // namespace kestrel::layer_test
