// Concurrency and determinism, over real models: several sessions of one Net
// on several threads at once give the single-threaded results, and every
// output is bit-identical across runs and across thread counts. Built and run
// under ThreadSanitizer too (scripts/test-sanitizers.sh).
#include <atomic>
#include <thread>

#include "kestrel/onnx.h"
#include "reference_util.h"

namespace kestrel {
namespace {

using testing::bit_identical;
using testing::shared_path;

struct Model {
    std::string name;
    Net net;
    Tensor input;
};

// Small shared models, both front-ends: many layer kinds (conv, depthwise,
// pools, attention, norms, broadcasts, resizes, shape subgraphs), cheap enough
// to run many times under ASan and TSan.
std::vector<std::unique_ptr<Model>> load_models()
{
    std::vector<std::unique_ptr<Model>> models;
    for (const char* name : {"shufflenet_v2_x0_5", "tiny_vit", "broadcasts", "dynamic_reshape", "resizes"}) {
        auto m = std::make_unique<Model>();
        m->name = std::string("onnx:") + name;
        load_onnx(m->net, shared_path(std::string("models/") + name + "/model.onnx"));
        m->input = read_npy(shared_path(std::string("models/") + name + "/input.npy"));
        models.push_back(std::move(m));
    }
    auto m = std::make_unique<Model>();
    m->name = "ncnn:demo";
    m->net.load_param(testing::source_path("models/demo/demo.param"));
    m->net.load_model(testing::source_path("models/demo/demo.bin"));
    m->input = Tensor({3, 32, 32}, DType::F32);
    for (int64_t i = 0; i < m->input.numel(); ++i)
        m->input.data<float>()[i] = static_cast<float>((i * 7919) % 255) / 127.f - 1.f;
    models.push_back(std::move(m));
    return models;
}

// A variant of the input per worker, so concurrent sessions see different data.
Tensor scaled(const Tensor& x, float factor)
{
    Tensor y = x.clone();
    for (int64_t i = 0; i < y.numel(); ++i) y.data<float>()[i] *= factor;
    return y;
}

std::vector<Tensor> run(const Model& m, const Tensor& input, int threads)
{
    Options o;
    o.threads = threads;
    Session s(m.net, o);
    s.set_input(m.net.input_names().at(0), input);
    return s.run(m.net.output_names());
}

bool all_identical(const std::vector<Tensor>& a, const std::vector<Tensor>& b)
{
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!bit_identical(a[i], b[i])) return false;
    return true;
}

TEST(Determinism, BitIdenticalAcrossRunsAndThreadCounts)
{
    for (const auto& m : load_models()) {
        SCOPED_TRACE(m->name);
        const std::vector<Tensor> reference = run(*m, m->input, 1);
        for (int threads : {1, 2, 3, 4})
            for (int repeat = 0; repeat < 2; ++repeat)
                EXPECT_TRUE(all_identical(run(*m, m->input, threads), reference))
                    << threads << " threads, run " << repeat;
    }
}

// Every worker runs every model, each with its own session and input, many
// times, while the others do the same; each result must equal the one a lone
// single-threaded session computed for that input.
TEST(Concurrency, SessionsOfOneNetOnManyThreads)
{
    const auto models = load_models();
    constexpr int kWorkers = 4, kRounds = 3;
    std::vector<std::vector<std::vector<Tensor>>> expected(models.size());
    for (size_t mi = 0; mi < models.size(); ++mi)
        for (int w = 0; w < kWorkers; ++w)
            expected[mi].push_back(run(*models[mi], scaled(models[mi]->input, 1.f + 0.125f * w), 1));

    std::atomic<int> mismatches{0}, errors{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < kWorkers; ++w)
        workers.emplace_back([&, w] {
            try {
                for (int round = 0; round < kRounds; ++round)
                    for (size_t mi = 0; mi < models.size(); ++mi) {
                        const size_t index = (mi + w) % models.size(); // workers start on different models
                        const Model& m = *models[index];
                        const Tensor input = scaled(m.input, 1.f + 0.125f * w);
                        if (!all_identical(run(m, input, 1 + (w + round) % 2), expected[index][w])) ++mismatches;
                    }
            } catch (const std::exception&) {
                ++errors;
            }
        });
    for (auto& t : workers) t.join();
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(mismatches.load(), 0);
}

// One session re-run many times, alternating inputs: no state leaks between runs.
TEST(Determinism, OneSessionRerunAlternatingInputs)
{
    for (const auto& m : load_models()) {
        SCOPED_TRACE(m->name);
        const Tensor a = m->input, b = scaled(m->input, -0.5f);
        const std::vector<Tensor> ra = run(*m, a, 2), rb = run(*m, b, 2);
        Options o;
        o.threads = 2;
        Session s(m->net, o);
        for (int i = 0; i < 4; ++i) {
            const bool use_a = i % 2 == 0;
            s.set_input(m->net.input_names().at(0), use_a ? a : b);
            EXPECT_TRUE(all_identical(s.run(m->net.output_names()), use_a ? ra : rb)) << "run " << i;
        }
    }
}

} // namespace
} // namespace kestrel
