// Detection layers (ncnn format): PriorBox, DetectionOutput, YoloDetectionOutput,
// Yolov3DetectionOutput. Expected values are either typed in from hand
// calculations or computed here by naive loops written from the layer
// definitions (see the comments at the top of each src/ops file and ncnn's
// layers), never by the ops' own code.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "graph/graph.h"
#include "kestrel/kestrel.h"
#include "layer_test_util.h"
#include "reference_util.h"
#include "runtime/analysis.h"

using namespace kestrel;

namespace {

using kestrel::layer_test::error_of;

// ---------------------------------------------------------------- helpers

std::unique_ptr<Op> make_op(const std::string& type, const ParamDict& pd)
{
    auto op = create_op(type);
    if (!op) throw Error("op " + type + " is not registered");
    op->type = type;
    op->name = "t";
    op->load_param(pd);
    return op;
}

struct RunResult {
    TensorDesc inferred; // what infer() announced
    Tensor out;          // what forward() left in outputs[0]
};

RunResult run_op(const Op& op, const std::vector<Tensor>& in, int threads = 1)
{
    std::vector<TensorDesc> descs;
    for (const Tensor& t : in) descs.push_back({t.shape(), t.dtype()});
    std::vector<TensorDesc> outs(1);
    op.infer(descs, outs);
    std::vector<Tensor> o{Tensor(outs[0].shape, outs[0].dtype)};
    static ThreadPool pool(3);
    op.run(in, o, ExecContext(threads > 1 ? &pool : nullptr, threads));
    return {outs[0], o[0]};
}

Tensor run(const std::string& type, const ParamDict& pd, const std::vector<Tensor>& in, int threads = 1)
{
    return run_op(*make_op(type, pd), in, threads).out;
}

Tensor tensor_of(Shape shape, const std::vector<float>& values)
{
    Tensor t(std::move(shape), DType::F32);
    EXPECT_EQ(static_cast<size_t>(t.numel()), values.size());
    std::copy(values.begin(), values.end(), t.data<float>());
    return t;
}

Tensor filled(Shape shape, float v)
{
    Tensor t(std::move(shape), DType::F32);
    std::fill(t.data<float>(), t.data<float>() + t.numel(), v);
    return t;
}

Tensor random_tensor(Shape shape, std::mt19937& rng, float lo, float hi)
{
    Tensor t(std::move(shape), DType::F32);
    std::uniform_real_distribution<float> d(lo, hi);
    for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = d(rng);
    return t;
}

std::vector<float> values_of(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.numel()}; }

#define EXPECT_ERROR(stmt, text)                                                                  \
    do {                                                                                          \
        const std::string msg_ = error_of([&] { stmt; });                                         \
        EXPECT_NE(msg_, "") << #stmt " did not throw";                                            \
        EXPECT_NE(msg_.find(text), std::string::npos) << "message: " << msg_ << "\nwanted: " << (text); \
    } while (0)

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol, const char* what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
}

// A detection row as the layers write it.
struct Det {
    float label, score, x0, y0, x1, y1;
};

std::vector<Det> rows_of(const Tensor& t)
{
    EXPECT_EQ(t.rank(), 2);
    EXPECT_EQ(t.dim(1), 6);
    std::vector<Det> v;
    for (int64_t i = 0; i < t.dim(0); ++i) {
        const float* r = t.data<float>() + i * 6;
        v.push_back({r[0], r[1], r[2], r[3], r[4], r[5]});
    }
    return v;
}

void expect_same_dets(const std::vector<Det>& got, const std::vector<Det>& want, float tol = 1e-5f)
{
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        SCOPED_TRACE("row " + std::to_string(i));
        EXPECT_EQ(got[i].label, want[i].label);
        EXPECT_NEAR(got[i].score, want[i].score, tol);
        EXPECT_NEAR(got[i].x0, want[i].x0, tol);
        EXPECT_NEAR(got[i].y0, want[i].y0, tol);
        EXPECT_NEAR(got[i].x1, want[i].x1, tol);
        EXPECT_NEAR(got[i].y1, want[i].y1, tol);
    }
}

// Reference pieces written from the definitions.
struct RefBox {
    float x0, y0, x1, y1, score, area;
    int label;
};

float ref_inter(const RefBox& a, const RefBox& b)
{
    const float w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
    const float h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
    return (w < 0 || h < 0) ? 0.f : w * h;
}

// Greedy NMS: walk by descending score, drop a box overlapping a kept one more than t.
std::vector<RefBox> ref_nms(std::vector<RefBox> boxes, float t, bool product_form)
{
    std::stable_sort(boxes.begin(), boxes.end(), [](const RefBox& a, const RefBox& b) { return a.score > b.score; });
    std::vector<RefBox> kept;
    for (const RefBox& a : boxes) {
        bool drop = false;
        for (const RefBox& b : kept) {
            const float inter = ref_inter(a, b), uni = a.area + b.area - inter;
            drop = drop || (product_form ? inter > t * uni : inter / uni > t);
        }
        if (!drop) kept.push_back(a);
    }
    return kept;
}

std::vector<Det> to_dets(const std::vector<RefBox>& v, float label_offset)
{
    std::vector<Det> d;
    for (const RefBox& b : v) d.push_back({static_cast<float>(b.label) + label_offset, b.score, b.x0, b.y0, b.x1, b.y1});
    return d;
}

float ref_sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

// =============================================================== PriorBox

ParamDict prior_params(std::vector<float> mins, std::vector<float> maxs, std::vector<float> ratios)
{
    ParamDict pd;
    pd.set_floats(0, std::move(mins));
    if (!maxs.empty()) pd.set_floats(1, std::move(maxs));
    if (!ratios.empty()) pd.set_floats(2, std::move(ratios));
    return pd;
}

// Caffe-style priors from the definition: per cell (row i, column j) centred at
// (offset * step_w + j * step_w, offset * step_h + i * step_h) (mmdetection
// centres: offset * (step - 1) + index * step), per min size the square, the
// sqrt(min*max) square, then each ratio's box and its transpose (flip); all
// divided by the image size; then clip; then the variance row.
struct CaffePriorRef {
    std::vector<float> mins, maxs, ratios;
    bool flip = true, clip = false, center_mm = false;
    float image_w = 0, image_h = 0, step_w = 0, step_h = 0, offset = 0;
    float var[4] = {0.1f, 0.1f, 0.2f, 0.2f};

    std::vector<float> compute(int fw, int fh) const
    {
        std::vector<float> boxes;
        for (int i = 0; i < fh; ++i)
            for (int j = 0; j < fw; ++j) {
                double cx = offset * step_w + j * static_cast<double>(step_w);
                double cy = offset * step_h + i * static_cast<double>(step_h);
                if (center_mm) {
                    cx = offset * (step_w - 1.0) + j * static_cast<double>(step_w);
                    cy = offset * (step_h - 1.0) + i * static_cast<double>(step_h);
                }
                auto add = [&](double bw, double bh) {
                    boxes.push_back(static_cast<float>((cx - bw / 2) / image_w));
                    boxes.push_back(static_cast<float>((cy - bh / 2) / image_h));
                    boxes.push_back(static_cast<float>((cx + bw / 2) / image_w));
                    boxes.push_back(static_cast<float>((cy + bh / 2) / image_h));
                };
                for (size_t k = 0; k < mins.size(); ++k) {
                    add(mins[k], mins[k]);
                    if (!maxs.empty()) add(std::sqrt(double(mins[k]) * maxs[k]), std::sqrt(double(mins[k]) * maxs[k]));
                    for (float r : ratios) {
                        add(mins[k] * std::sqrt(double(r)), mins[k] / std::sqrt(double(r)));
                        if (flip) add(mins[k] / std::sqrt(double(r)), mins[k] * std::sqrt(double(r)));
                    }
                }
            }
        if (clip)
            for (float& v : boxes) v = std::min(1.f, std::max(0.f, v));
        const size_t n = boxes.size();
        for (size_t i = 0; i < n; ++i) boxes.push_back(var[i % 4]);
        return boxes;
    }
};

TEST(PriorBox, CaffeTwoByTwoHandComputed)
{
    // min 30, max 120 (sqrt(30*120) = 60), ratio 2 with flip, image 300x300 from
    // input 1, feature 2x2 -> step 150, offset 0.5 -> centres 75 and 225.
    ParamDict pd = prior_params({30}, {120}, {2});
    pd.set_int(9, -233);
    pd.set_int(10, -233);
    pd.set_float(13, 0.5f);
    const Tensor out = run("PriorBox", pd, {filled({8, 2, 2}, 0.f), filled({3, 300, 300}, 0.f)});
    ASSERT_EQ(out.shape(), (Shape{2, 64})); // 4 cells x 4 priors x 4
    const std::vector<float> v = values_of(out);
    const float r2 = std::sqrt(2.f);
    const std::vector<float> cell00 = {
        0.2f, 0.2f, 0.3f, 0.3f,                                        // 30x30 at (75, 75)
        0.15f, 0.15f, 0.35f, 0.35f,                                    // 60x60
        (75 - 15 * r2) / 300, (75 - 15 / r2) / 300, (75 + 15 * r2) / 300, (75 + 15 / r2) / 300, // ratio 2
        (75 - 15 / r2) / 300, (75 - 15 * r2) / 300, (75 + 15 / r2) / 300, (75 + 15 * r2) / 300, // flipped
    };
    expect_near_all({v.begin(), v.begin() + 16}, cell00, 1e-6f, "cell (0,0)");
    expect_near_all({v.begin() + 16, v.begin() + 20}, {0.7f, 0.2f, 0.8f, 0.3f}, 1e-6f, "cell (0,1) first prior");
    expect_near_all({v.begin() + 32, v.begin() + 36}, {0.2f, 0.7f, 0.3f, 0.8f}, 1e-6f, "cell (1,0) first prior");
    expect_near_all({v.begin() + 48, v.begin() + 52}, {0.7f, 0.7f, 0.8f, 0.8f}, 1e-6f, "cell (1,1) first prior");
    for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(v[64 + i], (i % 4) < 2 ? 0.1f : 0.2f) << "variance " << i;

    CaffePriorRef ref;
    ref.mins = {30};
    ref.maxs = {120};
    ref.ratios = {2};
    ref.image_w = ref.image_h = 300;
    ref.step_w = ref.step_h = 150;
    ref.offset = 0.5f;
    expect_near_all(v, ref.compute(2, 2), 1e-6f, "reference");
}

TEST(PriorBox, FlipOffSeveralSizesRatiosAndVariances)
{
    ParamDict pd = prior_params({20, 50}, {40, 90}, {2, 0.5f, 3});
    pd.set_int(7, 0);
    pd.set_int(9, -233);
    pd.set_int(10, -233);
    pd.set_float(3, 0.5f);
    pd.set_float(4, 0.25f);
    pd.set_float(5, 1.5f);
    pd.set_float(6, 2.5f);
    const Tensor out = run("PriorBox", pd, {filled({4, 3, 5}, 0.f), filled({3, 90, 160}, 0.f)});
    // per min size: 1 + 1 (max) + 3 ratios = 5, times 2 min sizes = 10 priors per cell
    ASSERT_EQ(out.shape(), (Shape{2, 4 * 15 * 10}));
    CaffePriorRef ref;
    ref.mins = {20, 50};
    ref.maxs = {40, 90};
    ref.ratios = {2, 0.5f, 3};
    ref.flip = false;
    ref.image_w = 160;
    ref.image_h = 90;
    ref.step_w = 160.f / 5;
    ref.step_h = 90.f / 3;
    ref.var[0] = 0.5f, ref.var[1] = 0.25f, ref.var[2] = 1.5f, ref.var[3] = 2.5f;
    expect_near_all(values_of(out), ref.compute(5, 3), 2e-6f, "reference");
}

TEST(PriorBox, NoMaxNoRatiosFlipHasNothingToFlip)
{
    ParamDict pd = prior_params({16}, {}, {});
    pd.set_int(9, 64);
    pd.set_int(10, 32);
    const Tensor out = run("PriorBox", pd, {filled({1, 2, 2}, 0.f)});
    ASSERT_EQ(out.shape(), (Shape{2, 16}));
    // steps 32 and 16, offset 0: centres (0,0), (32,0), (0,16), (32,16)
    expect_near_all({out.data<float>(), out.data<float>() + 16},
                    {-8 / 64.f, -8 / 32.f, 8 / 64.f, 8 / 32.f, 24 / 64.f, -8 / 32.f, 40 / 64.f, 8 / 32.f,
                     -8 / 64.f, 8 / 32.f, 8 / 64.f, 24 / 32.f, 24 / 64.f, 8 / 32.f, 40 / 64.f, 24 / 32.f},
                    1e-6f, "boxes");
}

TEST(PriorBox, ClipBoxesButNotVariances)
{
    ParamDict pd = prior_params({200}, {}, {3});
    pd.set_int(8, 1);
    pd.set_int(9, -233);
    pd.set_int(10, -233);
    pd.set_float(13, 0.5f);
    pd.set_float(3, 1.5f); // > 1: must not be clipped
    const Tensor out = run("PriorBox", pd, {filled({1, 2, 2}, 0.f), filled({3, 300, 300}, 0.f)});
    ASSERT_EQ(out.shape(), (Shape{2, 48}));
    const std::vector<float> v = values_of(out);
    // cell (0,0), 200x200 at (75,75): (-25, -25, 175, 175)/300 -> clipped to 0
    expect_near_all({v.begin(), v.begin() + 4}, {0.f, 0.f, 175 / 300.f, 175 / 300.f}, 1e-6f, "first box");
    for (int i = 0; i < 48; ++i) {
        EXPECT_GE(v[i], 0.f);
        EXPECT_LE(v[i], 1.f);
    }
    for (int i = 0; i < 48; i += 4) EXPECT_EQ(v[48 + i], 1.5f);
    CaffePriorRef ref;
    ref.mins = {200};
    ref.ratios = {3};
    ref.clip = true;
    ref.image_w = ref.image_h = 300;
    ref.step_w = ref.step_h = 150;
    ref.offset = 0.5f;
    ref.var[0] = 1.5f;
    expect_near_all(v, ref.compute(2, 2), 1e-6f, "reference");
}

TEST(PriorBox, ExplicitImageSizeAndStepsWithOneInput)
{
    // 9/10 given: Caffe style even with one input (not MXNet style).
    ParamDict pd = prior_params({40}, {}, {});
    pd.set_int(9, 320);
    pd.set_int(10, 240);
    pd.set_float(11, 100.f);
    pd.set_float(12, 110.f);
    pd.set_float(13, 0.25f);
    const Tensor out = run("PriorBox", pd, {filled({2, 2, 3}, 0.f)});
    ASSERT_EQ(out.shape(), (Shape{2, 24}));
    // cell (1,2): centre (0.25*100 + 200, 0.25*110 + 110) = (225, 137.5)
    const float* b = out.data<float>() + (1 * 3 + 2) * 4;
    expect_near_all({b, b + 4}, {205 / 320.f, 117.5f / 240.f, 245 / 320.f, 157.5f / 240.f}, 1e-6f, "cell (1,2)");
    CaffePriorRef ref;
    ref.mins = {40};
    ref.image_w = 320;
    ref.image_h = 240;
    ref.step_w = 100;
    ref.step_h = 110;
    ref.offset = 0.25f;
    expect_near_all(values_of(out), ref.compute(3, 2), 1e-6f, "reference");
}

TEST(PriorBox, MmdetectionStepAndCentre)
{
    // image 300 on a 19x19 map: step 300/19 = 15.79; step_mmdetection rounds it up to 16.
    const Tensor feat = filled({1, 19, 19}, 0.f), img = filled({3, 300, 300}, 0.f);
    auto params = [](int step_mm, int center_mm) {
        ParamDict pd = prior_params({32}, {}, {});
        pd.set_int(9, -233);
        pd.set_int(10, -233);
        pd.set_float(13, 0.5f);
        pd.set_int(14, step_mm);
        pd.set_int(15, center_mm);
        return pd;
    };
    CaffePriorRef ref;
    ref.mins = {32};
    ref.image_w = ref.image_h = 300;
    ref.offset = 0.5f;
    const int last = (18 * 19 + 18) * 4;

    const Tensor plain = run("PriorBox", params(0, 0), {feat, img});
    ref.step_w = ref.step_h = 300.f / 19;
    expect_near_all(values_of(plain), ref.compute(19, 19), 2e-6f, "plain");

    const Tensor step_mm = run("PriorBox", params(1, 0), {feat, img});
    ref.step_w = ref.step_h = 16;
    expect_near_all(values_of(step_mm), ref.compute(19, 19), 2e-6f, "step_mmdetection");
    // cell (18,18): centre 0.5*16 + 18*16 = 296
    EXPECT_NEAR(step_mm.data<float>()[last], 280 / 300.f, 1e-6f);

    const Tensor both = run("PriorBox", params(1, 1), {feat, img});
    ref.center_mm = true;
    expect_near_all(values_of(both), ref.compute(19, 19), 2e-6f, "step and center mmdetection");
    // centre 0.5*(16-1) + 18*16 = 295.5
    expect_near_all({both.data<float>() + last, both.data<float>() + last + 4},
                    {279.5f / 300, 279.5f / 300, 311.5f / 300, 311.5f / 300}, 1e-6f, "cell (18,18)");
    EXPECT_NEAR(both.data<float>()[0], (7.5f - 16) / 300, 1e-6f);

    // center_mmdetection alone uses the fractional step
    const Tensor center_only = run("PriorBox", params(0, 1), {feat, img});
    ref.step_w = ref.step_h = 300.f / 19;
    expect_near_all(values_of(center_only), ref.compute(19, 19), 2e-6f, "center_mmdetection");
}

TEST(PriorBox, MxnetStyleHandComputed)
{
    // One input, 9=10=-233, no max sizes: MXNet MultiBoxPrior. Feature h=2, w=3;
    // sizes {0.5, 0.25}, ratios {1 (implied first), 4}: 2 - 1 + 2 = 3 priors per cell.
    ParamDict pd = prior_params({0.5f, 0.25f}, {}, {1, 4});
    pd.set_int(9, -233);
    pd.set_int(10, -233);
    pd.set_float(13, 0.5f);
    const Tensor out = run("PriorBox", pd, {filled({7, 2, 3}, 0.f)});
    ASSERT_EQ(out.shape(), (Shape{72})); // boxes only, no variance row
    const std::vector<float> v = values_of(out);
    // cell (0,0): centre (0.5/3, 0.5/2); half sizes: size*h/w/2 by size/2
    const std::vector<float> cell00 = {
        1 / 6.f - 1 / 6.f, 0.25f - 0.25f, 1 / 6.f + 1 / 6.f, 0.25f + 0.25f,        // size 0.5
        1 / 6.f - 1 / 12.f, 0.25f - 0.125f, 1 / 6.f + 1 / 12.f, 0.25f + 0.125f,    // size 0.25
        1 / 6.f - 1 / 3.f, 0.25f - 0.125f, 1 / 6.f + 1 / 3.f, 0.25f + 0.125f,      // ratio 4 at 0.5
    };
    expect_near_all({v.begin(), v.begin() + 12}, cell00, 1e-6f, "cell (0,0)");
    // full reference: cell (i,j) centre ((j + 0.5)/3, (i + 0.5)/2)
    std::vector<float> ref;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j) {
            const double cx = (j + 0.5) / 3, cy = (i + 0.5) / 2;
            for (double hw_hh : {0.5, 0.25}) {
                const double hw = hw_hh * 2 / 3 / 2, hh = hw_hh / 2;
                for (double d : {cx - hw, cy - hh, cx + hw, cy + hh}) ref.push_back(static_cast<float>(d));
            }
            const double hw = 0.5 * 2 / 3 * 2 / 2, hh = 0.5 / 2 / 2;
            for (double d : {cx - hw, cy - hh, cx + hw, cy + hh}) ref.push_back(static_cast<float>(d));
        }
    expect_near_all(v, ref, 1e-6f, "reference");

    pd.set_int(8, 1);
    const Tensor clipped = run("PriorBox", pd, {filled({7, 2, 3}, 0.f)});
    for (float& x : ref) x = std::min(1.f, std::max(0.f, x));
    expect_near_all(values_of(clipped), ref, 1e-6f, "clipped");

    // explicit steps in MXNet style are fractions of the image
    pd.set_int(8, 0);
    pd.set_float(11, 0.25f);
    pd.set_float(12, 0.4f);
    const Tensor stepped = run("PriorBox", pd, {filled({7, 2, 3}, 0.f)});
    const float* c12 = stepped.data<float>() + (1 * 3 + 2) * 12;
    // centre (0.5*0.25 + 2*0.25, 0.5*0.4 + 0.4) = (0.625, 0.6)
    expect_near_all({c12, c12 + 4}, {0.625f - 1 / 6.f, 0.35f, 0.625f + 1 / 6.f, 0.85f}, 1e-6f, "stepped cell (1,2)");
}

TEST(PriorBox, AnyFeatureDtypeAndThreadCountIndependent)
{
    ParamDict pd = prior_params({30, 60}, {60, 111}, {2, 3});
    pd.set_int(9, -233);
    pd.set_int(10, -233);
    pd.set_float(13, 0.5f);
    pd.set_int(8, 1);
    const Tensor img = filled({3, 300, 300}, 0.f);
    const Tensor f32 = run("PriorBox", pd, {filled({16, 19, 19}, 0.f), img}, 1);
    const Tensor threaded = run("PriorBox", pd, {filled({16, 19, 19}, 0.f), img}, 4);
    Tensor i8({16, 19, 19}, DType::I8);
    i8.fill_zero();
    const Tensor from_i8 = run("PriorBox", pd, {i8, img}, 1);
    EXPECT_EQ(f32.shape(), (Shape{2, 19 * 19 * 4 * 12}));
    EXPECT_TRUE(kestrel::testing::bit_identical(f32, threaded));
    EXPECT_TRUE(kestrel::testing::bit_identical(f32, from_i8));
    EXPECT_EQ(f32.dtype(), DType::F32);
}

TEST(PriorBox, Errors)
{
    auto load = [](const ParamDict& pd) { make_op("PriorBox", pd); };
    EXPECT_ERROR(load(ParamDict{}), "min size");
    EXPECT_ERROR(load(prior_params({0}, {}, {})), "min sizes (param 0) must be > 0");
    EXPECT_ERROR(load(prior_params({30, 60}, {90}, {})), "max sizes (param 1)");
    EXPECT_ERROR(load(prior_params({30}, {-4}, {})), "max sizes (param 1) must be > 0");
    EXPECT_ERROR(load(prior_params({30}, {}, {2, 0})), "aspect ratios (param 2) must be > 0");
    // ncnn's default image size 0 would divide by zero
    EXPECT_ERROR(load(prior_params({30}, {}, {2})), "image_width (param 9)");
    ParamDict pd = prior_params({30}, {}, {2});
    pd.set_int(9, 300);
    EXPECT_ERROR(load(pd), "image_height (param 10)");
    pd.set_int(10, -233);
    pd.set_float(11, 0.f);
    EXPECT_ERROR(load(pd), "step_width (param 11)");
    pd.set_float(11, -233.f);
    pd.set_float(12, -1.f);
    EXPECT_ERROR(load(pd), "step_height (param 12)");

    // image height from input 1 with a single input (not MXNet style: width given)
    ParamDict one = prior_params({30}, {}, {2});
    one.set_int(9, 300);
    one.set_int(10, -233);
    auto op = make_op("PriorBox", one);
    std::vector<TensorDesc> out(1);
    EXPECT_ERROR(op->infer({{{8, 2, 2}, DType::F32}}, out), "input 1");
    EXPECT_ERROR(op->infer({{{8, 2, 2}, DType::F32}, {{3, 9, 9}, DType::F32}, {{3, 9, 9}, DType::F32}}, out), "inputs");
    EXPECT_ERROR(op->infer({{{8, 0, 2}, DType::F32}, {{3, 9, 9}, DType::F32}}, out), "empty");
    // MXNet style needs a ratio (ncnn would write past its output)
    ParamDict mx = prior_params({0.2f}, {}, {});
    mx.set_int(9, -233);
    mx.set_int(10, -233);
    EXPECT_ERROR(make_op("PriorBox", mx)->infer({{{8, 2, 2}, DType::F32}}, out), "aspect ratio");
}

// ========================================================= DetectionOutput

// Caffe layout inputs from per-prior data.
struct SsdCase {
    std::vector<std::array<float, 4>> priors; // xmin ymin xmax ymax
    std::vector<std::array<float, 4>> vars;   // per prior
    std::vector<std::array<float, 4>> loc;
    std::vector<std::vector<float>> conf;     // per prior, per class (class 0 = background)

    std::vector<Tensor> tensors() const
    {
        const int64_t n = static_cast<int64_t>(priors.size()), nc = static_cast<int64_t>(conf[0].size());
        Tensor l({n * 4}), c({n * nc}), p({2, n * 4});
        for (int64_t i = 0; i < n; ++i)
            for (int k = 0; k < 4; ++k) {
                l.data<float>()[i * 4 + k] = loc[i][k];
                p.data<float>()[i * 4 + k] = priors[i][k];
                p.data<float>()[n * 4 + i * 4 + k] = vars[i][k];
            }
        for (int64_t i = 0; i < n; ++i)
            for (int64_t k = 0; k < nc; ++k) c.data<float>()[i * nc + k] = conf[i][k];
        return {l, c, p};
    }
    void add(std::array<float, 4> prior, std::vector<float> scores, std::array<float, 4> l = {0, 0, 0, 0},
             std::array<float, 4> var = {0.1f, 0.1f, 0.2f, 0.2f})
    {
        priors.push_back(prior);
        conf.push_back(std::move(scores));
        loc.push_back(l);
        vars.push_back(var);
    }
};

// SSD CENTER_SIZE decoding from its definition.
std::array<float, 4> ref_decode(const std::array<float, 4>& p, const std::array<float, 4>& v, const std::array<float, 4>& l)
{
    const double pw = p[2] - p[0], ph = p[3] - p[1], pcx = (p[0] + p[2]) / 2.0, pcy = (p[1] + p[3]) / 2.0;
    const double cx = v[0] * l[0] * pw + pcx, cy = v[1] * l[1] * ph + pcy;
    const double w = std::exp(double(v[2]) * l[2]) * pw, h = std::exp(double(v[3]) * l[3]) * ph;
    return {float(cx - w / 2), float(cy - h / 2), float(cx + w / 2), float(cy + h / 2)};
}

ParamDict det_params(int num_class, float nms, int nms_top_k, int keep_top_k, float conf)
{
    ParamDict pd;
    pd.set_int(0, num_class);
    pd.set_float(1, nms);
    pd.set_int(2, nms_top_k);
    pd.set_int(3, keep_top_k);
    pd.set_float(4, conf);
    return pd;
}

TEST(DetectionOutput, DecodesWithPerPriorVariances)
{
    SsdCase c;
    c.add({0.1f, 0.1f, 0.3f, 0.5f}, {0.1f, 0.9f}, {0.5f, -1.f, 0.7f, -0.3f}, {0.1f, 0.2f, 0.3f, 0.4f});
    c.add({0.6f, 0.5f, 0.9f, 0.7f}, {0.2f, 0.8f}, {-2.f, 1.f, -0.5f, 1.5f}, {0.5f, 0.25f, 1.f, 0.5f});
    const Tensor out = run("DetectionOutput", det_params(2, 0.45f, 100, 100, 0.25f), c.tensors());
    // hand-decoded first box: prior w 0.2 h 0.4 centre (0.2, 0.3); cx = 0.1*0.5*0.2 + 0.2 = 0.21,
    // cy = 0.2*-1*0.4 + 0.3 = 0.22, w = e^0.21 * 0.2, h = e^-0.12 * 0.4
    const float w0 = std::exp(0.21f) * 0.2f, h0 = std::exp(-0.12f) * 0.4f;
    std::vector<Det> want = {{1, 0.9f, 0.21f - w0 / 2, 0.22f - h0 / 2, 0.21f + w0 / 2, 0.22f + h0 / 2}};
    const auto b1 = ref_decode(c.priors[1], c.vars[1], c.loc[1]);
    want.push_back({1, 0.8f, b1[0], b1[1], b1[2], b1[3]});
    expect_same_dets(rows_of(out), want);
}

TEST(DetectionOutput, NmsPerClassWithKnownOverlaps)
{
    // loc 0: the decoded box is the prior. Boxes in units where overlaps are exact.
    SsdCase c;
    c.add({0, 0, 4, 4}, {0, 0.9f, 0.0f});    // A
    c.add({1, 0, 5, 4}, {0, 0.8f, 0.0f});    // B: IoU(A) = 12/20 = 0.6 -> suppressed by A
    c.add({2, 0, 6, 4}, {0, 0.7f, 0.0f});    // C: IoU(A) = 8/24 = 1/3 -> kept at threshold 1/3 (needs >)
    c.add({10, 10, 12, 12}, {0, 0.6f, 0.0f}); // D: apart
    c.add({0, 0, 4, 4}, {0, 0.0f, 0.65f});   // E: same box as A but class 2 -> kept (per-class NMS)
    c.add({4, 0, 8, 4}, {0, 0.55f, 0.0f});   // F: touches A at x = 4 (zero area): overlaps C by 8/24
    const Tensor out = run("DetectionOutput", det_params(3, 1.f / 3, 100, 100, 0.5f), c.tensors());
    expect_same_dets(rows_of(out), {{1, 0.9f, 0, 0, 4, 4},
                                     {1, 0.7f, 2, 0, 6, 4},
                                     {2, 0.65f, 0, 0, 4, 4},
                                     {1, 0.6f, 10, 10, 12, 12},
                                     {1, 0.55f, 4, 0, 8, 4}});
    // threshold 0.3: C (IoU 1/3 with A) goes; F (1/3 with C, 0 with A) stays as C is gone
    const Tensor lower = run("DetectionOutput", det_params(3, 0.3f, 100, 100, 0.5f), c.tensors());
    expect_same_dets(rows_of(lower), {{1, 0.9f, 0, 0, 4, 4},
                                       {2, 0.65f, 0, 0, 4, 4},
                                       {1, 0.6f, 10, 10, 12, 12},
                                       {1, 0.55f, 4, 0, 8, 4}});
}

TEST(DetectionOutput, NmsTopKCutsBeforeNmsAndKeepTopKAfterMerging)
{
    SsdCase c;
    c.add({0, 0, 1, 1}, {0, 0.9f, 0.f});
    c.add({0, 0, 1, 1.05f}, {0, 0.85f, 0.f}); // overlaps the first: suppressed
    c.add({3, 3, 4, 4}, {0, 0.8f, 0.f});
    c.add({6, 6, 7, 7}, {0, 0.f, 0.95f});
    c.add({8, 8, 9, 9}, {0, 0.f, 0.75f});
    c.add({10, 10, 11, 11}, {0, 0.f, 0.7f});
    auto run_with = [&](int nms_top_k, int keep_top_k) {
        return rows_of(run("DetectionOutput", det_params(3, 0.45f, nms_top_k, keep_top_k, 0.5f), c.tensors()));
    };
    const Det a{1, 0.9f, 0, 0, 1, 1}, third{1, 0.8f, 3, 3, 4, 4};
    const Det d{2, 0.95f, 6, 6, 7, 7}, e{2, 0.75f, 8, 8, 9, 9}, f{2, 0.7f, 10, 10, 11, 11};
    expect_same_dets(run_with(300, 100), {d, a, third, e, f});
    // nms_top_k 2 keeps the 2 best of each class before NMS: class 1 loses its third box
    // even though NMS then removes the second one.
    expect_same_dets(run_with(2, 100), {d, a, e});
    expect_same_dets(run_with(0, 100), {});
    // keep_top_k after merging classes, by score
    expect_same_dets(run_with(300, 3), {d, a, third});
    expect_same_dets(run_with(300, 0), {});
    // -1 (Caffe's "no limit") for either
    expect_same_dets(run_with(-1, -1), {d, a, third, e, f});
}

TEST(DetectionOutput, ConfidenceThresholdAndBackgroundSkip)
{
    SsdCase c;
    c.add({0, 0, 1, 1}, {0.4f, 0.5f});       // == threshold: not > 0.5
    c.add({2, 2, 3, 3}, {0.4f, 0.50001f});  // just above
    c.add({4, 4, 5, 5}, {0.5f, 0.75f});     // above, background 0.5 < 1 - 0.5? no: 0.5 >= 0.5 -> prior skipped
    c.add({6, 6, 7, 7}, {0.49f, 0.75f});    // background below 1 - threshold: decoded
    expect_same_dets(rows_of(run("DetectionOutput", det_params(2, 0.45f, 300, 100, 0.5f), c.tensors())),
                     {{1, 0.75f, 6, 6, 7, 7}, {1, 0.50001f, 2, 2, 3, 3}});
}

TEST(DetectionOutput, EmptyResultAndInferredBound)
{
    SsdCase c;
    for (int i = 0; i < 5; ++i) c.add({0.1f * i, 0, 0.1f * i + 0.05f, 0.05f}, {0.9f, 0.05f, 0.05f});
    auto op = make_op("DetectionOutput", det_params(3, 0.45f, 300, 100, 0.25f));
    const RunResult r = run_op(*op, c.tensors());
    // bound: 2 foreground classes x min(nms_top_k, 5 priors) = 10 < keep_top_k
    EXPECT_EQ(r.inferred.shape, (Shape{10, 6}));
    EXPECT_EQ(r.out.shape(), (Shape{0, 6}));
    EXPECT_EQ(r.out.numel(), 0);
    std::vector<TensorDesc> o(1);
    make_op("DetectionOutput", det_params(3, 0.45f, 300, 7, 0.25f))->infer({{{20}}, {{15}}, {{2, 20}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{7, 6}));
    make_op("DetectionOutput", det_params(3, 0.45f, 2, -1, 0.25f))->infer({{{20}}, {{15}}, {{2, 20}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{4, 6}));
    make_op("DetectionOutput", det_params(1, 0.45f, 2, -1, 0.25f))->infer({{{20}}, {{5}}, {{2, 20}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{0, 6}));
    // The buffer rows past the detections are marked (label -1) for runtimes that
    // hand out the inferred bound.
    const Tensor full = Tensor::zeros({10, 6});
    std::vector<Tensor> outs{full};
    op->run(c.tensors(), outs, ExecContext(nullptr, 1));
    EXPECT_EQ(outs[0].shape(), (Shape{0, 6}));
    for (int i = 0; i < 10; ++i) EXPECT_EQ(full.data<float>()[i * 6], -1.f);
}

TEST(DetectionOutput, TiesComeOutInNcnnOrder)
{
    // Equal scores: ncnn's quicksort (middle pivot, Hoare partition) is not stable.
    // Hand-run on class-1 scores [0.5, 0.9, 0.5, 0.5] (priors 0..3): the class sort
    // gives priors 1, 3, 2, 0; the global sort of that list gives 1, 0, 2, 3.
    SsdCase c;
    for (int i = 0; i < 4; ++i) c.add({float(2 * i), 0, float(2 * i + 1), 1}, {0, i == 1 ? 0.9f : 0.5f});
    std::vector<Det> got = rows_of(run("DetectionOutput", det_params(2, 0.45f, 300, 100, 0.1f), c.tensors()));
    ASSERT_EQ(got.size(), 4u);
    const float want_x[] = {2, 0, 4, 6};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got[i].x0, want_x[i]) << i;
    // Two equal scores swap; the pair is then swapped back by the global sort.
    SsdCase two;
    two.add({0, 0, 1, 1}, {0, 0.5f});
    two.add({2, 0, 3, 1}, {0, 0.5f});
    got = rows_of(run("DetectionOutput", det_params(2, 0.45f, 300, 100, 0.1f), two.tensors()));
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0].x0, 0.f);
    EXPECT_EQ(got[1].x0, 2.f);
    // Ties across classes: class 1 = [A], class 2 = [B, C] -> sorted [C, B]; merged
    // [A, C, B]; the global sort (pivot C; A and B swap) gives B, C, A. A stable
    // sort would give A, B, C.
    SsdCase three;
    three.add({0, 0, 1, 1}, {0, 0.5f, 0});
    three.add({2, 0, 3, 1}, {0, 0, 0.5f});
    three.add({4, 0, 5, 1}, {0, 0, 0.5f});
    got = rows_of(run("DetectionOutput", det_params(3, 0.45f, 300, 100, 0.1f), three.tensors()));
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].x0, 2.f);
    EXPECT_EQ(got[1].x0, 4.f);
    EXPECT_EQ(got[2].x0, 0.f);
    EXPECT_EQ(got[2].label, 1.f);
}

TEST(DetectionOutput, RandomCaffeLayoutMatchesReference)
{
    std::mt19937 rng(21);
    const int np = 60, nc = 4;
    SsdCase c;
    std::uniform_real_distribution<float> u(0.f, 1.f), n(-1.f, 1.f);
    for (int i = 0; i < np; ++i) {
        const float x = u(rng) * 0.7f, y = u(rng) * 0.7f;
        std::vector<float> logits(nc), prob(nc);
        float sum = 0;
        for (int k = 0; k < nc; ++k) sum += (logits[k] = std::exp(3 * n(rng)));
        for (int k = 0; k < nc; ++k) prob[k] = logits[k] / sum;
        c.add({x, y, x + 0.1f + 0.2f * u(rng), y + 0.1f + 0.2f * u(rng)}, prob, {n(rng), n(rng), n(rng), n(rng)},
              {0.1f, 0.1f, 0.2f, 0.2f});
    }
    const float thr = 0.2f, nms = 0.3f;
    const int nms_top_k = 12, keep_top_k = 20;
    // reference: per class > thr (prior skipped when background >= 1 - thr), sort,
    // nms_top_k, NMS; merge, sort, keep_top_k
    std::vector<RefBox> merged;
    for (int k = 1; k < nc; ++k) {
        std::vector<RefBox> cls;
        for (int i = 0; i < np; ++i) {
            if (c.conf[i][0] >= 1.0 - thr || !(c.conf[i][k] > thr)) continue;
            const auto b = ref_decode(c.priors[i], c.vars[i], c.loc[i]);
            cls.push_back({b[0], b[1], b[2], b[3], c.conf[i][k], (b[2] - b[0]) * (b[3] - b[1]), k});
        }
        std::stable_sort(cls.begin(), cls.end(), [](const RefBox& a, const RefBox& b) { return a.score > b.score; });
        if (cls.size() > size_t(nms_top_k)) cls.resize(nms_top_k);
        for (const RefBox& b : ref_nms(cls, nms, false)) merged.push_back(b);
    }
    std::stable_sort(merged.begin(), merged.end(), [](const RefBox& a, const RefBox& b) { return a.score > b.score; });
    if (merged.size() > size_t(keep_top_k)) merged.resize(keep_top_k);
    ASSERT_GT(merged.size(), 5u);
    const ParamDict pd = det_params(nc, nms, nms_top_k, keep_top_k, thr);
    const Tensor one = run("DetectionOutput", pd, c.tensors(), 1);
    expect_same_dets(rows_of(one), to_dets(merged, 0.f));
    EXPECT_TRUE(kestrel::testing::bit_identical(one, run("DetectionOutput", pd, c.tensors(), 3)));
}

TEST(DetectionOutput, MxnetLayout)
{
    // num_class -233: priorbox (num_prior, 4), conf (num_class, num_prior), variances from params 5-8.
    const int np = 3;
    Tensor prior = tensor_of({np, 4}, {0.1f, 0.1f, 0.3f, 0.3f, 0.5f, 0.5f, 0.9f, 0.8f, 0.0f, 0.6f, 0.2f, 1.0f});
    Tensor loc = tensor_of({np * 4}, {0.5f, 0.5f, 0.5f, 0.5f, -1, 0, 1, 0, 0, 0, 0, 0});
    Tensor conf = tensor_of({3, np}, {0.2f, 0.1f, 0.95f,    // background
                                      0.7f, 0.2f, 0.0f,     // class 1
                                      0.1f, 0.6f, 0.05f});  // class 2
    ParamDict pd = det_params(-233, 0.45f, 300, 100, 0.3f);
    pd.set_float(5, 0.5f);
    pd.set_float(6, 0.25f);
    pd.set_float(7, 1.f);
    pd.set_float(8, 2.f);
    const std::array<float, 4> var = {0.5f, 0.25f, 1.f, 2.f};
    const auto b0 = ref_decode({0.1f, 0.1f, 0.3f, 0.3f}, var, {0.5f, 0.5f, 0.5f, 0.5f});
    const auto b1 = ref_decode({0.5f, 0.5f, 0.9f, 0.8f}, var, {-1, 0, 1, 0});
    expect_same_dets(rows_of(run("DetectionOutput", pd, {loc, conf, prior})),
                     {{1, 0.7f, b0[0], b0[1], b0[2], b0[3]}, {2, 0.6f, b1[0], b1[1], b1[2], b1[3]}});
}

TEST(DetectionOutput, Errors)
{
    EXPECT_ERROR(make_op("DetectionOutput", ParamDict{}), "num_class (param 0)");
    EXPECT_ERROR(make_op("DetectionOutput", det_params(3, 0.45f, -2, 100, 0.5f)), "nms_top_k (param 2)");
    EXPECT_ERROR(make_op("DetectionOutput", det_params(3, 0.45f, 10, -5, 0.5f)), "keep_top_k (param 3)");
    EXPECT_ERROR(make_op("DetectionOutput", det_params(3, NAN, 10, 5, 0.5f)), "nms_threshold (param 1)");
    auto op = make_op("DetectionOutput", det_params(3, 0.45f, 300, 100, 0.5f));
    std::vector<TensorDesc> o(1);
    EXPECT_ERROR(op->infer({{{20}}, {{15}}}, o), "3 input");
    EXPECT_ERROR(op->infer({{{16}}, {{15}}, {{2, 20}}}, o), "loc");
    EXPECT_ERROR(op->infer({{{20}}, {{16}}, {{2, 20}}}, o), "conf");
    EXPECT_ERROR(op->infer({{{20}}, {{15}}, {{1, 20}}}, o), "priorbox");
    EXPECT_ERROR(op->infer({{{20}}, {{15}}, {{2, 18}}}, o), "priorbox");
    EXPECT_ERROR(op->infer({{{20}}, {{15}, DType::I8}, {{2, 20}}}, o), "float32");
    auto mx = make_op("DetectionOutput", det_params(-233, 0.45f, 300, 100, 0.5f));
    EXPECT_ERROR(mx->infer({{{20}}, {{3, 5}}, {{2, 20}}}, o), "MXNet");
    EXPECT_ERROR(mx->infer({{{20}}, {{3, 4}}, {{5, 4}}}, o), "MXNet");
    mx->infer({{{20}}, {{3, 5}}, {{5, 4}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{10, 6}));
}

// ===================================================== YoloDetectionOutput

// Input channel layout per box: x, y, w, h, objectness, classes.
struct YoloGrid {
    int num_box, num_class, h, w;
    Tensor t;
    YoloGrid(int nb, int nc, int h_, int w_) : num_box(nb), num_class(nc), h(h_), w(w_), t(Tensor::zeros({nb * (5 + nc), h_, w_})) {}
    float& at(int box, int ch, int i, int j) { return t.data<float>()[((box * (5 + num_class) + ch) * h + i) * w + j]; }
};

// v2 reference from the definition: softmax over classes, first argmax,
// sigmoid(obj) * prob >= threshold; box from sigmoid offsets and exp sizes
// times biases in grid units; class-agnostic NMS by IoU ratio.
std::vector<RefBox> ref_yolo2_candidates(YoloGrid& g, const std::vector<float>& biases, float thr)
{
    std::vector<RefBox> out;
    for (int b = 0; b < g.num_box; ++b)
        for (int i = 0; i < g.h; ++i)
            for (int j = 0; j < g.w; ++j) {
                double mx = -1e30, sum = 0;
                for (int q = 0; q < g.num_class; ++q) mx = std::max<double>(mx, g.at(b, 5 + q, i, j));
                for (int q = 0; q < g.num_class; ++q) sum += std::exp(g.at(b, 5 + q, i, j) - mx);
                int label = 0;
                double best = 0;
                for (int q = 0; q < g.num_class; ++q) {
                    const double p = std::exp(g.at(b, 5 + q, i, j) - mx) / sum;
                    if (p > best) best = p, label = q;
                }
                const float conf = static_cast<float>(ref_sigmoid(g.at(b, 4, i, j)) * best);
                if (conf < thr) continue;
                const float cx = (j + ref_sigmoid(g.at(b, 0, i, j))) / g.w, cy = (i + ref_sigmoid(g.at(b, 1, i, j))) / g.h;
                const float bw = std::exp(g.at(b, 2, i, j)) * biases[2 * b] / g.w;
                const float bh = std::exp(g.at(b, 3, i, j)) * biases[2 * b + 1] / g.h;
                RefBox r{cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2, conf, 0, label};
                r.area = (r.x1 - r.x0) * (r.y1 - r.y0);
                out.push_back(r);
            }
    return out;
}

ParamDict yolo_params(int num_class, int num_box, float conf, float nms, std::vector<float> biases)
{
    ParamDict pd;
    pd.set_int(0, num_class);
    pd.set_int(1, num_box);
    pd.set_float(2, conf);
    pd.set_float(3, nms);
    pd.set_floats(4, std::move(biases));
    return pd;
}

TEST(YoloDetectionOutput, HandComputedCell)
{
    // 2 boxes, 3 classes, grid 2x4. Only box 1 at cell (1,2) is confident.
    YoloGrid g(2, 3, 2, 4);
    for (int b = 0; b < 2; ++b)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 4; ++j) g.at(b, 4, i, j) = -20; // objectness ~ 0
    g.at(1, 4, 1, 2) = 0;               // sigmoid 0.5
    g.at(1, 5 + 0, 1, 2) = std::log(1.f);
    g.at(1, 5 + 1, 1, 2) = std::log(3.f); // softmax (1, 3, 4)/8 -> class 2 with 0.5
    g.at(1, 5 + 2, 1, 2) = std::log(4.f);
    g.at(1, 0, 1, 2) = 0;               // x offset 0.5
    g.at(1, 1, 1, 2) = 0;               // y offset 0.5
    g.at(1, 2, 1, 2) = std::log(2.f);   // w = 2 * bias_w / 4
    g.at(1, 3, 1, 2) = 0;               // h = bias_h / 2
    const Tensor out = run("YoloDetectionOutput", yolo_params(3, 2, 0.2f, 0.45f, {1, 1, 1.5f, 0.5f}), {g.t});
    // centre (2.5/4, 1.5/2) = (0.625, 0.75), size (0.75, 0.25); confidence 0.5 * 0.5; label 2 + 1
    expect_same_dets(rows_of(out), {{3, 0.25f, 0.625f - 0.375f, 0.75f - 0.125f, 0.625f + 0.375f, 0.75f + 0.125f}});
    // confidence_threshold is inclusive. One class: probability exactly 1, confidence sigmoid(0) = 0.5.
    YoloGrid one(1, 1, 1, 1);
    EXPECT_EQ(rows_of(run("YoloDetectionOutput", yolo_params(1, 1, 0.5f, 0.45f, {1, 1}), {one.t})).size(), 1u);
    EXPECT_EQ(run("YoloDetectionOutput", yolo_params(1, 1, 0.5000001f, 0.45f, {1, 1}), {one.t}).shape(), (Shape{0, 6}));
    // equal class scores: the first class wins
    YoloGrid tie(1, 3, 1, 1);
    tie.at(0, 5 + 1, 0, 0) = 1;
    tie.at(0, 5 + 2, 0, 0) = 1;
    const std::vector<Det> t = rows_of(run("YoloDetectionOutput", yolo_params(3, 1, 0.1f, 0.45f, {1, 1}), {tie.t}));
    ASSERT_EQ(t.size(), 1u);
    EXPECT_EQ(t[0].label, 2.f);
}

TEST(YoloDetectionOutput, ClassAgnosticNmsAcrossInputs)
{
    // One class-0 box and an overlapping, less confident class-1 box on another
    // input (scale): class-agnostic NMS removes the second.
    YoloGrid a(1, 2, 1, 1), b(1, 2, 2, 2);
    for (YoloGrid* g : {&a, &b})
        for (int i = 0; i < g->h; ++i)
            for (int j = 0; j < g->w; ++j) g->at(0, 4, i, j) = -30;
    a.at(0, 4, 0, 0) = 3;
    a.at(0, 5, 0, 0) = 2; // class 0
    b.at(0, 4, 0, 0) = 2;
    b.at(0, 6, 0, 0) = 2; // class 1
    b.at(0, 0, 0, 0) = 10;
    b.at(0, 1, 0, 0) = 10; // centre near (0.5, 0.5), like a's
    b.at(0, 2, 0, 0) = std::log(2.f);
    b.at(0, 3, 0, 0) = std::log(2.f); // size 2 * 0.5 / 2 = 0.5, a's is 0.5 / 1
    const ParamDict pd = yolo_params(2, 1, 0.3f, 0.45f, {0.5f, 0.5f});
    const std::vector<Det> got = rows_of(run("YoloDetectionOutput", pd, {a.t, b.t}));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].label, 1.f);
    EXPECT_NEAR(got[0].score, ref_sigmoid(3) * (std::exp(2.f) / (std::exp(2.f) + 1)), 1e-6f);
    // raising the NMS threshold above their IoU keeps both
    auto kept = ref_yolo2_candidates(a, {0.5f, 0.5f}, 0.3f);
    for (const RefBox& r : ref_yolo2_candidates(b, {0.5f, 0.5f}, 0.3f)) kept.push_back(r);
    ASSERT_EQ(kept.size(), 2u);
    const float iou = ref_inter(kept[0], kept[1]) / (kept[0].area + kept[1].area - ref_inter(kept[0], kept[1]));
    EXPECT_GT(iou, 0.45f);
    const std::vector<Det> both = rows_of(run("YoloDetectionOutput", yolo_params(2, 1, 0.3f, iou + 0.01f, {0.5f, 0.5f}), {a.t, b.t}));
    expect_same_dets(both, to_dets(ref_nms(kept, iou + 0.01f, false), 1.f));
    ASSERT_EQ(both.size(), 2u);
    EXPECT_EQ(both[1].label, 2.f);
}

TEST(YoloDetectionOutput, RandomGridsMatchReference)
{
    std::mt19937 rng(5);
    const int nb = 3, nc = 4;
    const std::vector<float> biases = {1.1f, 1.3f, 2.5f, 1.9f, 0.6f, 0.8f};
    YoloGrid g1(nb, nc, 5, 6), g2(nb, nc, 3, 3);
    for (YoloGrid* g : {&g1, &g2}) {
        std::uniform_real_distribution<float> d(-3.f, 3.f);
        for (int64_t i = 0; i < g->t.numel(); ++i) g->t.data<float>()[i] = d(rng);
    }
    const float thr = 0.3f, nms = 0.4f;
    std::vector<RefBox> cands = ref_yolo2_candidates(g1, biases, thr);
    for (const RefBox& r : ref_yolo2_candidates(g2, biases, thr)) cands.push_back(r);
    const std::vector<RefBox> want = ref_nms(cands, nms, false);
    ASSERT_GT(want.size(), 4u);
    const ParamDict pd = yolo_params(nc, nb, thr, nms, biases);
    auto op = make_op("YoloDetectionOutput", pd);
    const RunResult r = run_op(*op, {g1.t, g2.t}, 1);
    EXPECT_EQ(r.inferred.shape, (Shape{nb * (30 + 9), 6}));
    expect_same_dets(rows_of(r.out), to_dets(want, 1.f));
    EXPECT_TRUE(kestrel::testing::bit_identical(r.out, run_op(*op, {g1.t, g2.t}, 3).out));
}

TEST(YoloDetectionOutput, Errors)
{
    EXPECT_ERROR(make_op("YoloDetectionOutput", yolo_params(20, 5, 0.1f, 0.45f, {1, 2, 3})), "biases (param 4)");
    EXPECT_ERROR(make_op("YoloDetectionOutput", yolo_params(0, 1, 0.1f, 0.45f, {1, 2})), "num_class (param 0)");
    EXPECT_ERROR(make_op("YoloDetectionOutput", yolo_params(2, 0, 0.1f, 0.45f, {1, 2})), "num_box (param 1)");
    auto op = make_op("YoloDetectionOutput", yolo_params(20, 5, 0.1f, 0.45f, std::vector<float>(10, 1.f)));
    std::vector<TensorDesc> o(1);
    EXPECT_ERROR(op->infer({}, o), "at least one input");
    EXPECT_ERROR(op->infer({{{124, 13, 13}}}, o), "channels");
    EXPECT_ERROR(op->infer({{{125, 13, 13}}, {{125, 26}}}, o), "input 1");
    EXPECT_ERROR(op->infer({{{125, 13, 13}, DType::I8}}, o), "float32");
    op->infer({{{125, 13, 13}}, {{125, 26, 26}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{5 * (169 + 676), 6}));
}

// =================================================== Yolov3DetectionOutput

// v3 reference from the definition: first argmax of the class logits;
// confidence 1 / (1 + e^-obj * (1 + e^-cls)) >= threshold; anchor mask[s*nb + b];
// net size int(anchors_scale[s] * grid); sizes exp(t) * anchor / net; area w*h;
// class-agnostic NMS with inter > t * union.
std::vector<RefBox> ref_yolo3_candidates(YoloGrid& g, int scale_index, const std::vector<float>& biases,
                                         const std::vector<int>& mask, const std::vector<float>& anchors_scale, float thr)
{
    std::vector<RefBox> out;
    const int net_w = static_cast<int>(anchors_scale[scale_index] * g.w);
    const int net_h = static_cast<int>(anchors_scale[scale_index] * g.h);
    for (int b = 0; b < g.num_box; ++b) {
        const int anchor = mask[scale_index * g.num_box + b];
        for (int i = 0; i < g.h; ++i)
            for (int j = 0; j < g.w; ++j) {
                int label = 0;
                float cls = g.at(b, 5, i, j);
                for (int q = 1; q < g.num_class; ++q)
                    if (g.at(b, 5 + q, i, j) > cls) cls = g.at(b, 5 + q, i, j), label = q;
                const float conf = 1.f / (1.f + std::exp(-g.at(b, 4, i, j)) * (1.f + std::exp(-cls)));
                if (conf < thr) continue;
                const float cx = (j + ref_sigmoid(g.at(b, 0, i, j))) / g.w, cy = (i + ref_sigmoid(g.at(b, 1, i, j))) / g.h;
                const float bw = std::exp(g.at(b, 2, i, j)) * biases[2 * anchor] / net_w;
                const float bh = std::exp(g.at(b, 3, i, j)) * biases[2 * anchor + 1] / net_h;
                out.push_back({cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2, conf, bw * bh, label});
            }
    }
    return out;
}

ParamDict yolo3_params(int num_class, int num_box, float conf, float nms, std::vector<float> biases,
                       std::vector<int> mask, std::vector<float> anchors_scale)
{
    ParamDict pd;
    pd.set_int(0, num_class);
    pd.set_int(1, num_box);
    pd.set_float(2, conf);
    pd.set_float(3, nms);
    pd.set_floats(4, std::move(biases));
    pd.set_ints(5, std::move(mask));
    pd.set_floats(6, std::move(anchors_scale));
    return pd;
}

TEST(Yolov3DetectionOutput, ConfidenceParenthesisationQuirk)
{
    // obj = cls = 0: ncnn's 1/(1 + e^0 * (1 + e^0)) = 1/3, where sigmoid*sigmoid would be 1/4.
    YoloGrid g(1, 2, 1, 1);
    const ParamDict pd = yolo3_params(2, 1, 0.3f, 0.45f, {10, 20}, {0}, {32});
    const std::vector<Det> got = rows_of(run("Yolov3DetectionOutput", pd, {g.t}));
    // box: centre (0.5, 0.5), net size int(32 * 1) = 32, size (10/32, 20/32); label 0 + 1
    expect_same_dets(got, {{1, 1.f / 3, 0.5f - 5 / 32.f, 0.5f - 10 / 32.f, 0.5f + 5 / 32.f, 0.5f + 10 / 32.f}});
    // obj = 2, cls = -1: 1/(1 + e^-2 (1 + e^1))
    g.at(0, 4, 0, 0) = 2;
    g.at(0, 5, 0, 0) = -1;
    g.at(0, 6, 0, 0) = -3;
    const std::vector<Det> q = rows_of(run("Yolov3DetectionOutput", pd, {g.t}));
    ASSERT_EQ(q.size(), 1u);
    EXPECT_NEAR(q[0].score, 1 / (1 + std::exp(-2.0) * (1 + std::exp(1.0))), 1e-6);
    EXPECT_EQ(q[0].label, 1.f);
}

TEST(Yolov3DetectionOutput, MaskPerInputAndTruncatedNetSize)
{
    // yolov4-tiny style: anchors_scale 33.6 and 16.8, masks {3,4,5} and {1,2,3}.
    const std::vector<float> biases = {10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319};
    const std::vector<int> mask = {3, 4, 5, 1, 2, 3};
    const std::vector<float> scale = {33.6f, 16.8f};
    YoloGrid s0(3, 1, 13, 13), s1(3, 1, 26, 26);
    s0.at(2, 4, 6, 7) = 5;  // box 2 of scale 0: anchor 5 (344 x 319)
    s1.at(0, 4, 20, 3) = 5; // box 0 of scale 1: anchor 1 (23 x 27)
    for (YoloGrid* g : {&s0, &s1})
        for (int b = 0; b < 3; ++b)
            for (int i = 0; i < g->h; ++i)
                for (int j = 0; j < g->w; ++j)
                    if (g->at(b, 4, i, j) == 0) g->at(b, 4, i, j) = -20;
    const ParamDict pd = yolo3_params(1, 3, 0.5f, 0.45f, biases, mask, scale);
    const std::vector<Det> got = rows_of(run("Yolov3DetectionOutput", pd, {s0.t, s1.t}));
    // net sizes int(33.6 * 13) = 436 and int(16.8 * 26) = 436 (436.8 truncated)
    const float c = 1.f / (1.f + std::exp(-5.f) * 2.f); // class logit 0: (1 + e^0) = 2
    const float w0 = 344 / 436.f, h0 = 319 / 436.f, w1 = 23 / 436.f, h1 = 27 / 436.f;
    std::vector<Det> want = {{1, c, 7.5f / 13 - w0 / 2, 6.5f / 13 - h0 / 2, 7.5f / 13 + w0 / 2, 6.5f / 13 + h0 / 2},
                             {1, c, 3.5f / 26 - w1 / 2, 20.5f / 26 - h1 / 2, 3.5f / 26 + w1 / 2, 20.5f / 26 + h1 / 2}};
    // equal scores: ncnn's sort swaps the two (hand-run: pivot is element 0, both stop, swap)
    std::swap(want[0], want[1]);
    expect_same_dets(got, want);
}

TEST(Yolov3DetectionOutput, ProductFormNmsAndNoTopK)
{
    // Nested boxes: inner area 1/4 of outer, IoU exactly 0.25 -> kept at 0.25, dropped at 0.24.
    // Box 0: 32/64 = 0.5 wide, box 1: 16/64 = 0.25, both centred at 0.5: inter 1/16, union 1/4.
    YoloGrid g(2, 1, 1, 1);
    g.at(0, 4, 0, 0) = 4;
    g.at(1, 4, 0, 0) = 3;
    auto dets = [&](float nms) {
        return rows_of(run("Yolov3DetectionOutput", yolo3_params(1, 2, 0.1f, nms, {32, 32, 16, 16}, {0, 1}, {64}), {g.t}));
    };
    EXPECT_EQ(dets(0.25f).size(), 2u);
    EXPECT_EQ(dets(0.24f).size(), 1u);
    // many boxes, none overlapping: all of them come out (no top-k)
    YoloGrid many(1, 3, 8, 8);
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) many.at(0, 4, i, j) = 0.1f * (i * 8 + j);
    const Tensor out = run("Yolov3DetectionOutput", yolo3_params(3, 1, 0.f, 0.1f, {1, 1}, {0}, {8}), {many.t});
    EXPECT_EQ(out.shape(), (Shape{64, 6}));
}

TEST(Yolov3DetectionOutput, RandomScalesMatchReference)
{
    std::mt19937 rng(77);
    const int nb = 3, nc = 5;
    const std::vector<float> biases = {10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119};
    const std::vector<int> mask = {3, 4, 5, 0, 1, 2};
    const std::vector<float> scale = {32.f, 16.f};
    YoloGrid g0(nb, nc, 4, 5), g1(nb, nc, 8, 10);
    for (YoloGrid* g : {&g0, &g1}) {
        std::uniform_real_distribution<float> d(-3.f, 2.f);
        for (int64_t i = 0; i < g->t.numel(); ++i) g->t.data<float>()[i] = d(rng);
    }
    const float thr = 0.35f, nms = 0.3f;
    std::vector<RefBox> cands = ref_yolo3_candidates(g0, 0, biases, mask, scale, thr);
    for (const RefBox& r : ref_yolo3_candidates(g1, 1, biases, mask, scale, thr)) cands.push_back(r);
    const std::vector<RefBox> want = ref_nms(cands, nms, true);
    ASSERT_GT(want.size(), 5u);
    const ParamDict pd = yolo3_params(nc, nb, thr, nms, biases, mask, scale);
    auto op = make_op("Yolov3DetectionOutput", pd);
    const RunResult r = run_op(*op, {g0.t, g1.t});
    EXPECT_EQ(r.inferred.shape, (Shape{nb * (20 + 80), 6}));
    expect_same_dets(rows_of(r.out), to_dets(want, 1.f));
    EXPECT_TRUE(kestrel::testing::bit_identical(r.out, run_op(*op, {g0.t, g1.t}, 4).out));
}

TEST(Yolov3DetectionOutput, MaskAsFloatBitsPlainIntsOrFloats)
{
    // Converters write the mask as the int bit patterns of floats (3.0f = 1077936128).
    std::mt19937 rng(3);
    YoloGrid g0(3, 2, 3, 3), g1(3, 2, 6, 6);
    for (YoloGrid* g : {&g0, &g1}) {
        std::uniform_real_distribution<float> d(-2.f, 2.f);
        for (int64_t i = 0; i < g->t.numel(); ++i) g->t.data<float>()[i] = d(rng);
    }
    const std::vector<float> biases = {10, 14, 23, 27, 37, 58, 81, 82, 135, 169, 344, 319};
    const std::string head = "7767517\n3 3\nInput a 0 1 a\nInput b 0 1 b\n"
                             "Yolov3DetectionOutput det 2 1 a b out 0=2 1=3 2=0.3 "
                             "-23304=12,10.0,14.0,23.0,27.0,37.0,58.0,81.0,82.0,135.0,169.0,344.0,319.0 ";
    const std::vector<std::string> masks = {"-23305=6,1077936128,1082130432,1084227584,0,1065353216,1073741824",
                                            "-23305=6,3,4,5,0,1,2", "-23305=6,3.0,4.0,5.0,0.0,1.0,2.0"};
    std::vector<RefBox> cands = ref_yolo3_candidates(g0, 0, biases, {3, 4, 5, 0, 1, 2}, {32, 16}, 0.3f);
    for (const RefBox& r : ref_yolo3_candidates(g1, 1, biases, {3, 4, 5, 0, 1, 2}, {32, 16}, 0.3f)) cands.push_back(r);
    const std::vector<Det> want = to_dets(ref_nms(cands, 0.45f, true), 1.f);
    ASSERT_GT(want.size(), 2u);
    for (const std::string& m : masks) {
        SCOPED_TRACE(m);
        Net net;
        net.load_param_mem(head + m + " -23306=2,32.0,16.0\n");
        Session s(net);
        s.set_input("a", g0.t);
        s.set_input("b", g1.t);
        expect_same_dets(rows_of(s.get("out")), want);
    }
}

TEST(Yolov3DetectionOutput, Errors)
{
    EXPECT_ERROR(make_op("Yolov3DetectionOutput", yolo3_params(2, 1, 0.3f, 0.45f, {10, 20}, {1}, {32})), "mask (param 5)");
    EXPECT_ERROR(make_op("Yolov3DetectionOutput", yolo3_params(2, 1, 0.3f, 0.45f, {10, 20}, {0}, {0})),
                 "anchors_scale (param 6)");
    EXPECT_ERROR(make_op("Yolov3DetectionOutput", yolo3_params(0, 1, 0.3f, 0.45f, {10, 20}, {0}, {32})), "num_class");
    auto op = make_op("Yolov3DetectionOutput", yolo3_params(2, 1, 0.3f, 0.45f, {10, 20, 30, 40}, {0, 1}, {32}));
    std::vector<TensorDesc> o(1);
    EXPECT_ERROR(op->infer({{{7, 2, 2}}, {{7, 4, 4}}}, o), "anchors_scale (param 6)");
    EXPECT_ERROR(op->infer({{{8, 2, 2}}}, o), "channels");
    EXPECT_ERROR(op->infer({{{7, 2, 2}}, {{7, 4, 4}}, {{7, 8, 8}}}, o), "mask (param 5)");
    EXPECT_ERROR(op->infer({{{7, 4}}}, o), "input 0");
    auto tiny = make_op("Yolov3DetectionOutput", yolo3_params(2, 1, 0.3f, 0.45f, {10, 20}, {0}, {0.1f}));
    EXPECT_ERROR(tiny->infer({{{7, 2, 2}}}, o), "network size");
    op->infer({{{7, 2, 2}}}, o);
    EXPECT_EQ(o[0].shape, (Shape{4, 6}));
}

// ================================================== through a Session

// A layer whose output always has zero rows, to check that the runtime carries
// zero-element tensors end to end (ncnn's detection layers return empty Mats).
class ZeroRowsOp : public Op {
public:
    void infer(const std::vector<TensorDesc>&, std::vector<TensorDesc>& out) const override
    {
        out[0] = TensorDesc{{0, 6}, DType::F32};
    }
    void forward(const std::vector<Tensor>&, std::vector<Tensor>&, const ExecContext&) const override {}
};

TEST(DetectionSession, ZeroElementOutputsFlowEndToEnd)
{
    register_op("KestrelTestZeroRows", [] { return std::make_unique<ZeroRowsOp>(); });
    Net net;
    net.load_param_mem("7767517\n4 5\nInput in 0 1 x\nKestrelTestZeroRows z 1 1 x e\nSplit sp 1 2 e e1 e2\n"
                       "ReLU r 1 1 e2 f\n");
    for (bool reuse : {true, false}) {
        Options opt;
        opt.reuse_memory = reuse;
        Session s(net, opt);
        s.set_input("x", filled({3, 4}, 1.f));
        const std::vector<Tensor> r = s.run({"e1", "f", "e"});
        for (const Tensor& t : r) {
            EXPECT_EQ(t.shape(), (Shape{0, 6}));
            EXPECT_EQ(t.numel(), 0);
            EXPECT_EQ(t.dtype(), DType::F32);
        }
    }
    // and as a session input
    Net pass;
    pass.load_param_mem("7767517\n2 2\nInput in 0 1 x\nReLU r 1 1 x y\n");
    Session s(pass);
    s.set_input("x", Tensor({0, 6}));
    EXPECT_EQ(s.get("y").shape(), (Shape{0, 6}));
}

// PriorBox feeding DetectionOutput in one graph.
const char* kSsdGraph = R"(7767517
6 6
Input     img   0 1 img
Input     feat  0 1 feat
Input     loc   0 1 loc
Input     conf  0 1 conf
PriorBox  pb    2 1 feat img prior -23300=1,30.0 -23302=1,2.0 7=0 9=-233 10=-233 13=0.5
DetectionOutput det 3 1 loc conf prior out 0=3 1=0.45 2=10 3=5 4=0.3
)";

TEST(DetectionSession, SsdHeadThroughASession)
{
    // 2x2 map, 2 priors per cell (square, ratio 2) = 8 priors; 3 classes.
    Net net;
    net.load_param_mem(kSsdGraph);
    std::mt19937 rng(11);
    const Tensor loc = random_tensor({32}, rng, -0.5f, 0.5f);
    Tensor conf({8 * 3});
    const float scores[8][3] = {{0.1f, 0.8f, 0.1f},  {0.5f, 0.2f, 0.3f},   {0.2f, 0.1f, 0.7f},  {0.9f, 0.05f, 0.05f},
                                {0.3f, 0.35f, 0.35f}, {0.1f, 0.45f, 0.45f}, {0.6f, 0.4f, 0.0f},  {0.0f, 0.0f, 1.0f}};
    for (int i = 0; i < 8; ++i)
        for (int k = 0; k < 3; ++k) conf.data<float>()[i * 3 + k] = scores[i][k];
    Session s(net);
    s.set_input("img", filled({3, 200, 200}, 0.f));
    s.set_input("feat", filled({4, 2, 2}, 0.f));
    s.set_input("loc", loc);
    s.set_input("conf", conf);
    const std::vector<Tensor> r = s.run({"prior", "out"});
    ASSERT_EQ(r[0].shape(), (Shape{2, 32}));

    // reference: priors by hand from the definition, then decode + NMS per class
    std::vector<RefBox> merged;
    std::vector<std::array<float, 4>> priors;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) {
            const float cx = 50 + 100 * j, cy = 50 + 100 * i, r2 = std::sqrt(2.f);
            priors.push_back({(cx - 15) / 200, (cy - 15) / 200, (cx + 15) / 200, (cy + 15) / 200});
            priors.push_back({(cx - 15 * r2) / 200, (cy - 15 / r2) / 200, (cx + 15 * r2) / 200, (cy + 15 / r2) / 200});
        }
    for (int k = 1; k < 3; ++k) {
        std::vector<RefBox> cls;
        for (int i = 0; i < 8; ++i) {
            if (scores[i][0] >= 1.0 - 0.3f || !(scores[i][k] > 0.3f)) continue;
            const auto b = ref_decode(priors[i], {0.1f, 0.1f, 0.2f, 0.2f},
                                      {loc.data<float>()[4 * i], loc.data<float>()[4 * i + 1],
                                       loc.data<float>()[4 * i + 2], loc.data<float>()[4 * i + 3]});
            cls.push_back({b[0], b[1], b[2], b[3], scores[i][k], (b[2] - b[0]) * (b[3] - b[1]), k});
        }
        for (const RefBox& b : ref_nms(cls, 0.45f, false)) merged.push_back(b);
    }
    std::stable_sort(merged.begin(), merged.end(), [](const RefBox& a, const RefBox& b) { return a.score > b.score; });
    if (merged.size() > 5) merged.resize(5);
    const std::vector<Det> want = to_dets(merged, 0.f);
    ASSERT_EQ(want.size(), 5u); // scores 1.0, 0.8, 0.7, 0.45, 0.45; keep_top_k cuts the rest

    std::vector<Det> got = rows_of(r[1]);
    // bound: min(keep_top_k 5, 2 classes x min(10, 8)) = 5 -> same either way here
    EXPECT_EQ(r[1].shape(), (Shape{5, 6}));
    // the two 0.45 scores tie (prior 5, classes 1 and 2): compare as a set there
    if (got.size() == 5 && got[3].label == 2) std::swap(got[3], got[4]);
    expect_same_dets(got, want);
}

TEST(DetectionSession, EmptyDetectionThroughASession)
{
    Net net;
    net.load_param_mem(kSsdGraph);
    Tensor conf({8 * 3});
    for (int i = 0; i < 8; ++i) {
        conf.data<float>()[i * 3] = 0.9f;
        conf.data<float>()[i * 3 + 1] = conf.data<float>()[i * 3 + 2] = 0.05f;
    }
    Session s(net);
    s.set_input("img", filled({3, 200, 200}, 0.f));
    s.set_input("feat", filled({4, 2, 2}, 0.f));
    s.set_input("loc", filled({32}, 0.f));
    s.set_input("conf", conf);
    const Tensor out = s.get("out");
    EXPECT_EQ(out.shape(), (Shape{0, 6})); // ncnn: an empty Mat
    EXPECT_EQ(out.numel(), 0);
}

TEST(DetectionSession, FewerDetectionsThanTheBound)
{
    Net net;
    net.load_param_mem(kSsdGraph);
    Tensor conf({8 * 3});
    for (int i = 0; i < 8; ++i) {
        conf.data<float>()[i * 3] = 0.9f;
        conf.data<float>()[i * 3 + 1] = conf.data<float>()[i * 3 + 2] = 0.05f;
    }
    conf.data<float>()[2 * 3] = 0.f; // prior 2: class 1 at 0.6
    conf.data<float>()[2 * 3 + 1] = 0.6f;
    conf.data<float>()[2 * 3 + 2] = 0.4f;
    Session s(net);
    s.set_input("img", filled({3, 200, 200}, 0.f));
    s.set_input("feat", filled({4, 2, 2}, 0.f));
    s.set_input("loc", filled({32}, 0.f));
    s.set_input("conf", conf);
    const Tensor out = s.get("out");
    // prior 2 is the square prior of cell (0,1): centre (150, 50), size 30
    const Det a{1, 0.6f, 135 / 200.f, 35 / 200.f, 165 / 200.f, 65 / 200.f}, b{2, 0.4f, 135 / 200.f, 35 / 200.f, 165 / 200.f, 65 / 200.f};
    EXPECT_EQ(out.shape(), (Shape{2, 6}));
    expect_same_dets(rows_of(out), {a, b});
}

TEST(DetectionSession, LayersAfterADetectionTableSeeItsTrueShape)
{
    // Flatten and ReLU after DetectionOutput are re-inferred from the (n, 6) table.
    std::string text = kSsdGraph;
    text.replace(text.find("6 6"), 3, "8 8");
    text += "Flatten fl 1 1 out flat\nReLU r 1 1 flat flat_relu\n";
    Net net;
    net.load_param_mem(text);
    Tensor conf({8 * 3});
    for (int i = 0; i < 8; ++i) {
        conf.data<float>()[i * 3] = 0.9f;
        conf.data<float>()[i * 3 + 1] = conf.data<float>()[i * 3 + 2] = 0.05f;
    }
    Session s(net);
    s.set_input("img", filled({3, 200, 200}, 0.f));
    s.set_input("feat", filled({4, 2, 2}, 0.f));
    s.set_input("loc", filled({32}, 0.f));
    s.set_input("conf", conf);
    EXPECT_EQ(s.get("flat_relu").shape(), (Shape{0}));
    conf.data<float>()[5 * 3] = 0.f; // prior 5: class 2 at 0.8
    conf.data<float>()[5 * 3 + 2] = 0.8f;
    s.set_input("conf", conf);
    const std::vector<Tensor> r = s.run({"out", "flat_relu"});
    EXPECT_EQ(r[0].shape(), (Shape{1, 6}));
    ASSERT_EQ(r[1].shape(), (Shape{6}));
    EXPECT_EQ(r[1].data<float>()[0], 2.f);
    EXPECT_FLOAT_EQ(r[1].data<float>()[1], 0.8f);
    // static analysis reports the bound
    const ModelReport rep = analyze_model(net, {{"img", TensorDesc({3, 200, 200})},
                                                {"feat", TensorDesc({4, 2, 2})},
                                                {"loc", TensorDesc({32})},
                                                {"conf", TensorDesc({24})}});
    bool seen = false;
    for (const LayerReport& l : rep.layers)
        if (net.graph().layers[l.layer].type == "DetectionOutput") {
            EXPECT_EQ(l.outputs[0].shape, (Shape{5, 6}));
            seen = true;
        }
    EXPECT_TRUE(seen);
}

// ======================================================== zoo models

// Shape hints (-23330=dims,w,h,c...) of every layer of a given type in a zoo .param.
std::map<std::string, Shape> shape_hints(const std::string& path, const std::string& type)
{
    std::map<std::string, Shape> hints;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream is(line);
        std::string t, name, tok;
        is >> t >> name;
        if (t != type) continue;
        while (is >> tok) {
            if (tok.rfind("-23330=", 0) != 0) continue;
            std::vector<int64_t> v;
            std::stringstream vs(tok.substr(7));
            std::string n;
            while (std::getline(vs, n, ',')) v.push_back(std::stoll(n));
            // count, dims, w, h, c
            const int dims = static_cast<int>(v.at(1));
            hints[name] = dims == 1 ? Shape{v.at(2)} : dims == 2 ? Shape{v.at(3), v.at(2)} : Shape{v.at(4), v.at(3), v.at(2)};
        }
    }
    return hints;
}

class DetectionZoo : public ::testing::TestWithParam<const char*> {};

TEST_P(DetectionZoo, ShapesMatchNcnnHintsAndZeroWeightRunDetectsNothing)
{
    const std::string path = kestrel::testing::shared_path(std::string("zoo/") + GetParam() + ".param");
    Net net;
    try {
        net.load_param(path);
    } catch (const Error& e) {
        if (std::string(e.what()).find("unknown layer type") != std::string::npos)
            GTEST_SKIP() << "other layers not available yet: " << e.what();
        throw;
    }
    net.load_model_zeros();
    const std::string input = net.input_names().at(0);
    const Shape in_shape = net.input_shape(input);
    ASSERT_EQ(in_shape.size(), 3u);
    const ModelReport report = analyze_model(net, {{input, TensorDesc{in_shape, DType::F32}}});
    const auto hints = shape_hints(path, "PriorBox");
    int checked = 0;
    for (const LayerReport& l : report.layers) {
        const Layer& layer = net.graph().layers[l.layer];
        if (layer.type != "PriorBox") continue;
        ASSERT_TRUE(hints.count(layer.name)) << layer.name;
        EXPECT_EQ(l.outputs[0].shape, hints.at(layer.name)) << layer.name;
        ++checked;
    }
    EXPECT_EQ(checked, static_cast<int>(hints.size()));
    // ncnn's hint for a detection table is the row count of some run of its own:
    // never above our bound. (YoloDetectionOutput's hint is its input shape: ncnn
    // computes it in place.)
    for (const char* type : {"DetectionOutput", "Yolov3DetectionOutput"}) {
        const auto det_hints = shape_hints(path, type);
        for (const LayerReport& l : report.layers) {
            const Layer& layer = net.graph().layers[l.layer];
            if (layer.type != type || !det_hints.count(layer.name)) continue;
            const Shape& h = det_hints.at(layer.name);
            ASSERT_EQ(h.size(), 2u);
            EXPECT_EQ(h[1], 6);
            EXPECT_LE(h[0], l.outputs[0].shape[0]) << layer.name;
        }
    }

    // A full zero-weight run (inputs 0.01, as benchncnn does) of the cheaper models:
    // every head input is 0, so SSD scores are 1/21 < 0.25 and Yolov3 confidences
    // are 1/(1 + 1 * 2) = 1/3 < 0.55 (yolo-fastest): nothing is detected.
    const std::string name = GetParam();
    if (name != "mobilenet_ssd" && name != "yolo-fastest-1.1") return;
    Session s(net);
    s.set_input(input, filled(in_shape, 0.01f));
    EXPECT_EQ(s.get(net.output_names().at(0)).shape(), (Shape{0, 6}));
}

INSTANTIATE_TEST_SUITE_P(Models, DetectionZoo,
                         ::testing::Values("mobilenet_ssd", "squeezenet_ssd", "mobilenet_yolo", "mobilenetv2_yolov3",
                                           "yolov4-tiny", "yolo-fastest-1.1"));

} // namespace
