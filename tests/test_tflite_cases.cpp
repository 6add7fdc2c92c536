// TensorFlow Lite models against TensorFlow Lite itself: the operator cases
// and the MediaPipe models that tests/tflite/make_cases.py writes (ctest
// fixture tflite_cases), each with the outputs of TFLite's own interpreter.
// Kestrel loads each .tflite (NHWC in, NHWC out), runs it on the same inputs
// and must give the reference outputs within the case's tolerance times the
// largest reference value (0: exactly, for integers and booleans).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

#include "kestrel/net.h"
#include "kestrel/npy.h"
#include "kestrel/tflite.h"

using namespace kestrel;

namespace {

struct TfliteCase {
    std::string name;
    double tolerance = 0;
};

std::string cases_dir() { return KESTREL_TFLITE_CASES_DIR; }

bool exists(const std::string& path)
{
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::vector<TfliteCase> read_cases()
{
    std::vector<TfliteCase> cases;
    std::ifstream in(cases_dir() + "/cases.txt");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        TfliteCase c;
        if (words >> c.name >> c.tolerance) cases.push_back(c);
    }
    return cases;
}

std::string file(const TfliteCase& c, const std::string& suffix) { return cases_dir() + "/" + c.name + suffix; }

// Largest |reference - output| over the largest |reference| (float tensors).
double relative_error(const Tensor& ref, const Tensor& out)
{
    const Tensor r = ref.to(DType::F64), o = out.to(DType::F64);
    double diff = 0, scale = 0;
    for (int64_t i = 0; i < r.numel(); ++i) {
        const double a = r.data<double>()[i], b = o.data<double>()[i];
        diff = std::max(diff, std::isnan(a) != std::isnan(b) ? INFINITY : std::fabs(a - b));
        scale = std::max(scale, std::fabs(a));
    }
    return diff / std::max(scale, 1e-30);
}

void check_case(const TfliteCase& c, int threads)
{
    Net net;
    load_tflite(net, file(c, ".tflite"));
    Options options;
    options.threads = threads;
    Session session(net, options);
    const std::vector<std::string> inputs = net.input_names();
    std::vector<Tensor> values;
    for (size_t k = 0; k < inputs.size(); ++k) values.push_back(read_npy(file(c, ".in" + std::to_string(k) + ".npy")));
    for (size_t k = 0; k < inputs.size(); ++k) session.set_input(inputs[k], values[k]);
    const std::vector<std::string> outputs = net.output_names();
    const std::vector<Tensor> got = session.run(outputs);
    for (size_t k = 0; k < outputs.size(); ++k) {
        SCOPED_TRACE("output " + std::to_string(k) + " '" + outputs[k] + "'");
        const Tensor ref = read_npy(file(c, ".out" + std::to_string(k) + ".npy"));
        ASSERT_EQ(shape_str(got[k].shape()), shape_str(ref.shape()));
        ASSERT_EQ(dtype_name(got[k].dtype()), std::string(dtype_name(ref.dtype())));
        if (c.tolerance == 0) {
            ASSERT_EQ(0, std::memcmp(got[k].raw(), ref.raw(), ref.nbytes())) << "values differ";
        } else {
            EXPECT_LE(relative_error(ref, got[k]), c.tolerance);
        }
    }
    EXPECT_FALSE(exists(file(c, ".out" + std::to_string(outputs.size()) + ".npy"))) << "the reference has more outputs";
}

// One test over every case: the cases are written by a ctest fixture, after
// GoogleTest's tests are listed, so they cannot be listed one by one.
TEST(TfliteCases, EveryCaseMatchesTensorFlowLite)
{
    const std::vector<TfliteCase> cases = read_cases();
    if (cases.empty()) GTEST_SKIP() << "no TFLite cases in " << cases_dir() << " (node or npm's tfjs-tflite missing)";
    EXPECT_GE(cases.size(), 100u) << "cases.txt lists too few cases";
    int mediapipe = 0;
    for (const TfliteCase& c : cases) {
        SCOPED_TRACE(c.name);
        const bool real_model = c.name.rfind("mediapipe_", 0) == 0;
        mediapipe += real_model;
        check_case(c, 1);
        if (real_model) check_case(c, 2);
    }
    std::printf("%zu TFLite cases (%d MediaPipe models) against TensorFlow Lite\n", cases.size(), mediapipe);
}

} // namespace
