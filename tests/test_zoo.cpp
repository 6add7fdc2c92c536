// Every network of ncnn's benchmark set (../shared/zoo) loads and runs with
// zero weights and 0.01 inputs, as benchncnn does, giving finite outputs.
// Skipped in sanitizer builds, where the big networks take minutes.
#include <cmath>
#include <fstream>
#include <sstream>

#include "reference_util.h"


namespace kestrel {
namespace {

using testing::zoo_models;
using testing::ZooModel;

TEST(Zoo, EveryBenchmarkNetworkRuns)
{
#ifdef KESTREL_TESTS_UNDER_ASAN
    GTEST_SKIP() << "too slow under AddressSanitizer; covered by the optimized build";
#endif
    const std::vector<ZooModel> models = zoo_models();
    ASSERT_EQ(models.size(), 35u);
    for (const ZooModel& m : models) {
        SCOPED_TRACE(m.name);
        Net net;
        net.load_param(testing::shared_path("zoo/" + m.name + ".param"));
        net.load_model_zeros();
        Options options;
        options.threads = 2;
        Session session(net, options);
        Tensor x(m.shape);
        std::fill(x.data<float>(), x.data<float>() + x.numel(), 0.01f);
        for (const std::string& input : net.input_names()) session.set_input(input, x);
        for (const Tensor& out : session.run(net.output_names())) {
            const Tensor f = out.to(DType::F32);
            for (int64_t i = 0; i < f.numel(); ++i) ASSERT_TRUE(std::isfinite(f.data<float>()[i])) << "output value " << i;
        }
    }
}

} // namespace
} // namespace kestrel
