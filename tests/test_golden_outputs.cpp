// Refactors keep every output bit for bit: the outputs of the zoo networks
// (pseudo-random weights and inputs) and of the shared reference models are
// hashed and compared with tests/data/golden_outputs_<isa>.txt, recorded by an
// earlier build (the file's first line names its commit). Bits depend on the
// kernels' ISA (FMA rounding, vector widths), so there is a file per ISA
// (avx512, avx2) and the test skips on an ISA without one. The hashes are of the direct kernels
// (LoadOptions::winograd off); Winograd's outputs, which differ by rounding,
// are checked against those direct outputs within a tolerance.
//
// To record anew (only when a change is meant to alter results):
//   KESTREL_GOLDEN_RECORD=tests/data/golden_outputs_$ISA.txt ./build/kestrel_tests --gtest_filter='Golden*'
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "graph/graph.h"
#include "kernels/isa.h"
#include "reference_util.h"
#ifdef KESTREL_HAVE_ONNX
#include "kestrel/onnx.h"
#endif


namespace kestrel {
namespace {

using testing::shared_path;
using testing::source_path;

// splitmix64: a fixed stream whatever the platform.
struct Stream {
    uint64_t state;
    uint64_t next()
    {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform in [-scale, scale).
    float uniform(float scale) { return (static_cast<float>(next() >> 40) / 16777216.0f * 2.0f - 1.0f) * scale; }
};

// The .bin a network reads: small floats. A tagged weight reads one as its tag,
// which makes it ncnn's codebook form (256 floats, then a byte per value), so
// every weight comes out pseudo-random. The stream is cut where the network
// stops reading (the loader probes one byte past its last weight).
void load_pseudo_random_weights(Net& net, const std::string& param, bool winograd)
{
    LoadOptions options;
    options.winograd = winograd;
    net.set_load_options(options);
    Stream s{12345};
    std::vector<uint8_t> bytes;
    Net probe;
    probe.load_param(param);
    size_t given = 0;
    try {
        probe.load_model(
            [&](void* dst, size_t n) {
                while (bytes.size() < given + n) {
                    const float f = s.uniform(0.1f);
                    const uint8_t* b = reinterpret_cast<const uint8_t*>(&f);
                    bytes.insert(bytes.end(), b, b + 4);
                }
                std::memcpy(dst, bytes.data() + given, n);
                given += n;
                return n;
            },
            "<pseudo-random>");
    } catch (const Error&) {
        // "bytes left over": the probe byte was the first one past the weights.
    }
    net.load_model_mem(bytes.data(), given > 0 ? given - 1 : 0, "<pseudo-random>");
}

Tensor pseudo_random_input(const Shape& shape, uint64_t seed)
{
    Tensor t(shape);
    Stream s{seed};
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = s.uniform(1.0f);
    return t;
}

uint64_t fnv1a(const Tensor& t)
{
    uint64_t h = 1469598103934665603ull;
    const uint8_t* p = static_cast<const uint8_t*>(t.raw());
    for (size_t i = 0; i < t.nbytes(); ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

// "model output = dtype shape hash" per output, "model layers = hash" over
// the layers' float outputs in the order they ran, or "model = error <message>".
void describe_outputs(const std::string& model, Session& session, const std::vector<std::string>& outputs,
                      std::map<std::string, std::string>& lines)
{
    uint64_t all_layers = 0;
    int layers = 0;
    // Float outputs only: integer ones are mostly shape arithmetic, which the
    // runtime may evaluate while planning instead (then no callback sees it).
    session.set_callbacks(nullptr, [&](const OpEvent& e) {
        for (const Tensor& t : e.outputs)
            if (dtype_is_float(t.dtype())) {
                all_layers = all_layers * 31 + fnv1a(t);
                ++layers;
            }
    });
    try {
        const std::vector<Tensor> outs = session.run(outputs);
        for (size_t i = 0; i < outs.size(); ++i) {
            std::ostringstream line;
            line << dtype_name(outs[i].dtype()) << " " << shape_str(outs[i].shape()) << " " << std::hex << fnv1a(outs[i]);
            lines[model + " " + outputs[i]] = line.str();
        }
        std::ostringstream line;
        line << layers << " float layer outputs " << std::hex << all_layers;
        lines[model + " layers"] = line.str();
    } catch (const Error& e) {
        lines[model] = std::string("error ") + e.what();
    }
}

// The zoo network's outputs for the pseudo-random weights and input, or
// (with `describe`) their description.
// The blobs two plans of a network are compared on: its outputs, except that
// a detection layer's inputs stand for its output (which boxes pass its score
// threshold and suppression flips with the last bit of a score near them).
std::vector<std::string> compared_blobs(const Net& net)
{
    const Graph& g = net.graph();
    std::vector<std::string> blobs;
    for (const std::string& name : net.output_names()) {
        const int producer = g.blobs[g.find_blob(name)].producer;
        if (producer < 0 || g.layers[producer].type.find("DetectionOutput") == std::string::npos) {
            blobs.push_back(name);
            continue;
        }
        for (int b : g.layers[producer].bottoms) blobs.push_back(g.blobs[b].name);
    }
    return blobs;
}

std::vector<Tensor> zoo_run(const testing::ZooModel& m, bool winograd,
                            const std::function<void(const std::string&, Session&, const std::vector<std::string>&)>&
                                describe = nullptr,
                            bool blocked_layouts = true)
{
    Net net;
    net.load_param(shared_path("zoo/" + m.name + ".param"));
    load_pseudo_random_weights(net, shared_path("zoo/" + m.name + ".param"), winograd);
    Options options;
    options.threads = 2;
    options.blocked_layouts = blocked_layouts;
    Session session(net, options);
    for (const std::string& input : net.input_names()) session.set_input(input, pseudo_random_input(m.shape, 7));
    if (describe) {
        describe("zoo/" + m.name, session, net.output_names());
        return {};
    }
    return session.run(compared_blobs(net));
}

void zoo_outputs(std::map<std::string, std::string>& lines)
{
    for (const testing::ZooModel& m : testing::zoo_models())
        zoo_run(m, false, [&](const std::string& model, Session& session, const std::vector<std::string>& outs) {
            describe_outputs(model, session, outs, lines);
        });
}

void shared_model_outputs(std::map<std::string, std::string>& lines)
{
    for (const char* name : {"broadcasts", "dynamic_reshape", "mobilenet_v2", "resizes", "resnet18", "shufflenet_v2_x0_5",
                             "squeezenet1_1", "tiny_vit"}) {
        const std::string dir = shared_path(std::string("models/") + name + "/");
        LoadOptions direct;
        direct.winograd = false;
        if (std::ifstream(dir + "ncnn.param").good()) {
            Net net;
            net.set_load_options(direct);
            net.load_param(dir + "ncnn.param");
            net.load_model(dir + "ncnn.bin");
            Session session(net);
            session.set_input(net.input_names().at(0), read_npy(dir + "ncnn_input.npy"));
            describe_outputs(std::string("models/") + name + "/ncnn", session, net.output_names(), lines);
        }
#ifdef KESTREL_HAVE_ONNX
        Net net;
        net.set_load_options(direct);
        load_onnx(net, dir + "model.onnx");
        Session session(net);
        session.set_input(net.input_names().at(0), read_npy(dir + "input.npy"));
        describe_outputs(std::string("models/") + name + "/onnx", session, net.output_names(), lines);
#endif
    }
}

const char* isa_name()
{
    switch (isas_available().back()) {
    case Isa::Generic: return "generic";
    case Isa::Avx2: return "avx2";
    case Isa::Avx512: return "avx512";
    }
    return "?";
}

TEST(Golden, OutputsAreBitIdenticalToTheRecordedOnes)
{
#ifdef KESTREL_TESTS_UNDER_ASAN
    GTEST_SKIP() << "too slow under AddressSanitizer; covered by the optimized build";
#endif
#ifndef KESTREL_HAVE_ONNX
    GTEST_SKIP() << "the recorded outputs include the ONNX models";
#endif
    std::map<std::string, std::string> got;
    zoo_outputs(got);
    shared_model_outputs(got);
    if (const char* record = std::getenv("KESTREL_GOLDEN_RECORD")) {
        std::ofstream out(record);
        out << "# recorded at " << (std::getenv("KESTREL_GOLDEN_COMMIT") ? std::getenv("KESTREL_GOLDEN_COMMIT") : "?")
            << "\nisa " << isa_name() << "\n";
        for (const auto& kv : got) out << kv.first << " = " << kv.second << "\n";
        GTEST_SKIP() << "recorded " << got.size() << " outputs to " << record;
    }
    const std::string file = "tests/data/golden_outputs_" + std::string(isa_name()) + ".txt";
    std::ifstream in(source_path(file));
    if (!in.good()) GTEST_SKIP() << "no outputs recorded for " << isa_name() << " kernels (" << file << ")";
    std::string line, isa;
    std::map<std::string, std::string> expected;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        if (line.rfind("isa ", 0) == 0) {
            isa = line.substr(4);
            continue;
        }
        const size_t eq = line.find(" = ");
        ASSERT_NE(eq, std::string::npos) << line;
        expected[line.substr(0, eq)] = line.substr(eq + 3);
    }
    if (isa != isa_name()) GTEST_SKIP() << "recorded with " << isa << " kernels, this machine runs " << isa_name();
    EXPECT_EQ(got.size(), expected.size());
    for (const auto& kv : expected) {
        auto it = got.find(kv.first);
        if (it == got.end()) {
            ADD_FAILURE() << kv.first << " is not produced any more";
            continue;
        }
        EXPECT_EQ(it->second, kv.second) << kv.first;
    }
}

// Outputs of two runs of each float zoo network within 1e-4 of each output's
// scale (its largest magnitude), or NaN in both (random weights overflow
// squeezenet_ssd's box offsets).
void expect_zoo_runs_agree(const std::function<std::vector<Tensor>(const testing::ZooModel&)>& first,
                           const std::function<std::vector<Tensor>(const testing::ZooModel&)>& second)
{
    for (const testing::ZooModel& m : testing::zoo_models()) {
        if (m.name.find("int8") != std::string::npos) continue; // int8 layers take neither path
        SCOPED_TRACE(m.name);
        std::vector<Tensor> a_out, b_out;
        try {
            a_out = first(m);
            b_out = second(m);
        } catch (const Error&) {
            continue; // the golden hashes record the error; nothing to compare
        }
        ASSERT_EQ(a_out.size(), b_out.size());
        for (size_t i = 0; i < a_out.size(); ++i) {
            ASSERT_EQ(a_out[i].shape(), b_out[i].shape());
            if (a_out[i].dtype() != DType::F32) continue;
            const float* a = a_out[i].data<float>();
            const float* b = b_out[i].data<float>();
            float scale = 0;
            for (int64_t j = 0; j < a_out[i].numel(); ++j) scale = std::max(scale, std::fabs(a[j]));
            int bad = 0;
            for (int64_t j = 0; j < a_out[i].numel(); ++j)
                if (!(std::fabs(a[j] - b[j]) <= 1e-4f * scale) && !(std::isnan(a[j]) && std::isnan(b[j])) && ++bad <= 3)
                    ADD_FAILURE() << "output " << i << "[" << j << "] = " << b[j] << ", expected " << a[j];
            EXPECT_EQ(bad, 0);
        }
    }
}

// Winograd (the default) against the direct kernels on every zoo network.
TEST(Golden, WinogradOutputsMatchTheDirectOnes)
{
#ifdef KESTREL_TESTS_UNDER_ASAN
    GTEST_SKIP() << "too slow under AddressSanitizer; covered by the optimized build";
#endif
    expect_zoo_runs_agree([](const testing::ZooModel& m) { return zoo_run(m, false); },
                          [](const testing::ZooModel& m) { return zoo_run(m, true); });
}

// Activations in channel blocks (the default; the golden hashes, taken with
// callbacks that see blobs plain, are of plain plans) against plain ones on
// every zoo network: the direct tile sums in another order than the GEMM.
TEST(Golden, BlockedLayoutOutputsMatchThePlainOnes)
{
#ifdef KESTREL_TESTS_UNDER_ASAN
    GTEST_SKIP() << "too slow under AddressSanitizer; covered by the optimized build";
#endif
    expect_zoo_runs_agree([](const testing::ZooModel& m) { return zoo_run(m, false, nullptr, false); },
                          [](const testing::ZooModel& m) { return zoo_run(m, false, nullptr, true); });
}

} // namespace
} // namespace kestrel
