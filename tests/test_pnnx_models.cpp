// Models in the form ncnn's converter pnnx writes (scripts/gen_pnnx_models.py,
// run by CTest's gen_pnnx_models fixture into the build tree: PyTorch modules
// written layer by layer with pnnx's conversions) load and match PyTorch.
#include <fstream>

#include "reference_util.h"

namespace kestrel {
namespace {

using testing::expect_close_to_reference;

std::string model_dir(const std::string& name) { return std::string(KESTREL_PNNX_MODELS_DIR) + "/" + name + "/"; }

class PnnxModel : public ::testing::TestWithParam<std::string> {};

// The model's only output (the blob no layer consumes), against PyTorch's,
// at 1 and 2 threads.
TEST_P(PnnxModel, MatchesPyTorch)
{
    const std::string dir = model_dir(GetParam());
    if (!std::ifstream(dir + "model.param").good())
        GTEST_SKIP() << dir << "model.param is missing: scripts/gen_pnnx_models.py needs python3-torch";
    Net net;
    net.load_param(dir + "model.param");
    net.load_model(dir + "model.bin");
    ASSERT_EQ(net.output_names().size(), 1u);
    for (int threads : {1, 2}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        Options opt;
        opt.threads = threads;
        Session session(net, opt);
        session.set_input(net.input_names().at(0), read_npy(dir + "input.npy"));
        const Tensor out = session.run({net.output_names().at(0)}).at(0);
        expect_close_to_reference(out, read_npy(dir + "output.npy"), 1e-4);
    }
}

INSTANTIATE_TEST_SUITE_P(Pnnx, PnnxModel, ::testing::Values("pnnx_vit_tail", "pnnx_conv_block", "pnnx_recurrent"));

} // namespace
} // namespace kestrel
