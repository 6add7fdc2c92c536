// ncnn's region layers (ROIAlign versions 0 and 1, ROIPooling, PSROIPooling)
// and Proposal against references written here from ncnn's loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <cmath>

#include "layer_test_util.h"

namespace kestrel {
namespace {

using namespace layer_test;

// ncnn's bilinear read (roialign.cpp): integer parts, the far neighbour
// clamped with its weight moved to the near one.
double ncnn_bilinear(const float* p, int w, int h, double x, double y)
{
    int x0 = static_cast<int>(x), y0 = static_cast<int>(y), x1 = x0 + 1, y1 = y0 + 1;
    double a0 = x1 - x, a1 = x - x0, b0 = y1 - y, b1 = y - y0;
    if (x1 >= w) x1 = w - 1, a0 = 1, a1 = 0;
    if (y1 >= h) y1 = h - 1, b0 = 1, b1 = 0;
    return (p[y0 * w + x0] * a0 + p[y0 * w + x1] * a1) * b0 + (p[y1 * w + x0] * a0 + p[y1 * w + x1] * a1) * b1;
}

std::vector<double> roi_align_reference(const Tensor& x, const float* roi, int pw, int ph, double scale, int ratio,
                                        bool aligned, int version)
{
    const int c = static_cast<int>(x.dim(0)), h = static_cast<int>(x.dim(1)), w = static_cast<int>(x.dim(2));
    double x1 = roi[0] * scale, y1 = roi[1] * scale, x2 = roi[2] * scale, y2 = roi[3] * scale;
    if (aligned) x1 -= 0.5, y1 -= 0.5, x2 -= 0.5, y2 -= 0.5;
    double rw = x2 - x1, rh = y2 - y1;
    if (!aligned) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    const double bw = rw / pw, bh = rh / ph;
    std::vector<double> y;
    for (int q = 0; q < c; ++q) {
        const float* p = x.data<float>() + q * h * w;
        for (int i = 0; i < ph; ++i)
            for (int j = 0; j < pw; ++j) {
                double sum = 0;
                if (version == 0) {
                    const double hs = std::clamp(y1 + i * bh, 0.0, double(h)), ws = std::clamp(x1 + j * bw, 0.0, double(w));
                    const double he = std::clamp(y1 + (i + 1) * bh, 0.0, double(h)), we = std::clamp(x1 + (j + 1) * bw, 0.0, double(w));
                    const int gh = ratio > 0 ? ratio : static_cast<int>(std::ceil(he - hs));
                    const int gw = ratio > 0 ? ratio : static_cast<int>(std::ceil(we - ws));
                    if (he <= hs || we <= ws) {
                        y.push_back(0);
                        continue;
                    }
                    for (int by = 0; by < gh; ++by)
                        for (int bx = 0; bx < gw; ++bx)
                            sum += ncnn_bilinear(p, w, h, ws + (bx + 0.5) * bw / gw, hs + (by + 0.5) * bh / gh);
                    y.push_back(sum / (gh * gw));
                } else {
                    const int gh = ratio > 0 ? ratio : static_cast<int>(std::ceil(rh / ph));
                    const int gw = ratio > 0 ? ratio : static_cast<int>(std::ceil(rw / pw));
                    for (int by = 0; by < gh; ++by)
                        for (int bx = 0; bx < gw; ++bx) {
                            double yy = y1 + i * bh + (by + 0.5) * bh / gh, xx = x1 + j * bw + (bx + 0.5) * bw / gw;
                            if (yy < -1 || yy > h || xx < -1 || xx > w) continue;
                            sum += ncnn_bilinear(p, w, h, std::max(xx, 0.0), std::max(yy, 0.0));
                        }
                    y.push_back(sum / std::max(gh * gw, 1));
                }
            }
    }
    return y;
}

TEST(NcnnDetection, ROIAlignBothVersions)
{
    const Tensor x = random_f32({3, 9, 11}, 40);
    // The second region reaches past the image: only version 1 samples there
    // defined behaviour (ncnn's version 0 reads outside the map then).
    const std::vector<std::vector<float>> rois = {{4.f, 3.f, 15.f, 12.f}, {-3.f, 1.f, 8.f, 24.f}, {2.5f, 2.5f, 3.f, 3.f}};
    for (const auto& roi : rois)
        for (int version : {0, 1})
            for (int aligned : {0, 1})
                for (int ratio : {0, 2}) {
                    if (version == 0 && roi[0] < 0) continue;
                    ParamDict pd = P({{0, 3}, {1, 2}, {3, ratio}, {4, aligned}, {5, version}});
                    pd.set_float(2, 0.5f);
                    const Tensor y = run1("ROIAlign", pd, {R(x), R(f32({4}, roi))});
                    EXPECT_EQ(y.shape(), Shape({3, 2, 3}));
                    expect_near_all(y, roi_align_reference(x, roi.data(), 3, 2, 0.5, ratio, aligned, version),
                                    "version " + std::to_string(version) + " aligned " + std::to_string(aligned) +
                                        " ratio " + std::to_string(ratio) + " roi x1 " + std::to_string(roi[0]));
                }
}

TEST(NcnnDetection, ROIPoolingAndPSROIPooling)
{
    const Tensor x = random_f32({2, 8, 10}, 41);
    // ncnn's arithmetic (roipooling.cpp): integer corners round(v * scale),
    // float bin sizes, int(corner + floorf / ceilf(p * bin)) clamped to the map.
    // Pooled 3x2 and 4x2 at scale 0.5 over regions on and off the grid.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> coord(-6.f, 26.f);
    std::vector<std::vector<float>> rois = {{3.f, 2.f, 14.f, 13.f}, {-4.f, 5.f, 30.f, 9.f}, {3.3f, 1.7f, 11.9f, 14.6f}};
    for (int i = 0; i < 40; ++i) rois.push_back({coord(rng), coord(rng), coord(rng), coord(rng)});
    for (const int pooled_w : {3, 4})
        for (const std::vector<float>& roi : rois) {
            ParamDict pd = P({{0, pooled_w}, {1, 2}});
            pd.set_float(2, 0.5f);
            const Tensor y = run1("ROIPooling", pd, {R(x), R(f32({4}, roi))});
            const int x1 = static_cast<int>(std::round(roi[0] * 0.5f)), y1 = static_cast<int>(std::round(roi[1] * 0.5f));
            const int x2 = static_cast<int>(std::round(roi[2] * 0.5f)), y2 = static_cast<int>(std::round(roi[3] * 0.5f));
            const float bw = static_cast<float>(std::max(x2 - x1 + 1, 1)) / static_cast<float>(pooled_w);
            const float bh = static_cast<float>(std::max(y2 - y1 + 1, 1)) / 2.f;
            std::vector<double> want;
            for (int q = 0; q < 2; ++q)
                for (int i = 0; i < 2; ++i)
                    for (int j = 0; j < pooled_w; ++j) {
                        const int hs = std::clamp(static_cast<int>(y1 + std::floor(static_cast<float>(i) * bh)), 0, 8);
                        const int he = std::clamp(static_cast<int>(y1 + std::ceil(static_cast<float>(i + 1) * bh)), 0, 8);
                        const int ws = std::clamp(static_cast<int>(x1 + std::floor(static_cast<float>(j) * bw)), 0, 10);
                        const int we = std::clamp(static_cast<int>(x1 + std::ceil(static_cast<float>(j + 1) * bw)), 0, 10);
                        double m = (he <= hs || we <= ws) ? 0.0 : -1e30;
                        for (int a = hs; a < he; ++a)
                            for (int b = ws; b < we; ++b) m = std::max<double>(m, x.data<float>()[(q * 8 + a) * 10 + b]);
                        want.push_back(m);
                    }
            expect_near_all(y, want, "ROIPooling");
        }
    // PSROIPooling: 2 output channels of 3x2 bins from 12 channels.
    const Tensor f = random_f32({12, 8, 10}, 42);
    const std::vector<float> roi = {10.f, 6.f, 60.f, 50.f};
    const Tensor y = run1("PSROIPooling", P({{0, 3}, {1, 2}, {3, 2}}), {R(f), R(f32({4}, roi))}); // scale 0.0625
    const double rx1 = std::round(roi[0]) * 0.0625, ry1 = std::round(roi[1]) * 0.0625;
    const double rx2 = std::round(roi[2] + 1.f) * 0.0625, ry2 = std::round(roi[3] + 1.f) * 0.0625;
    const double bw = std::max(rx2 - rx1, 0.1) / 3, bh = std::max(ry2 - ry1, 0.1) / 2;
    std::vector<double> want;
    for (int q = 0; q < 2; ++q)
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) {
                const int ch = (q * 2 + i) * 3 + j;
                const int hs = std::clamp(static_cast<int>(std::floor(ry1 + i * bh)), 0, 8);
                const int he = std::clamp(static_cast<int>(std::ceil(ry1 + (i + 1) * bh)), 0, 8);
                const int ws = std::clamp(static_cast<int>(std::floor(rx1 + j * bw)), 0, 10);
                const int we = std::clamp(static_cast<int>(std::ceil(rx1 + (j + 1) * bw)), 0, 10);
                double sum = 0;
                for (int a = hs; a < he; ++a)
                    for (int b = ws; b < we; ++b) sum += f.data<float>()[(ch * 8 + a) * 10 + b];
                want.push_back(he <= hs || we <= ws ? 0.0 : sum / ((he - hs) * (we - ws)));
            }
    EXPECT_EQ(y.shape(), Shape({2, 2, 3}));
    expect_near_all(y, want, "PSROIPooling");
    EXPECT_TRUE(contains(error_of([&] { run1("PSROIPooling", P({{0, 3}, {1, 2}, {3, 3}}), {R(f), R(f32({4}, roi))}); }),
                         "output_dim"));
}

// One box per anchor and cell, decoded and filtered as ncnn's proposal.cpp,
// then sorted by score (distinct scores here), NMS'd and cut.
TEST(NcnnDetection, ProposalDecodesFiltersAndSuppresses)
{
    const int a = 9, h = 3, w = 4, stride = 16;
    Tensor scores = random_f32({2 * a, h, w}, 43, 0.f, 1.f);
    // Distinct foreground scores so that the order needs no tie rule.
    for (int i = 0; i < a * h * w; ++i) scores.data<float>()[a * h * w + i] = 1.f - 0.0007f * static_cast<float>(i * 37 % (a * h * w));
    const Tensor deltas = random_f32({4 * a, h, w}, 44, -0.3f, 0.3f);
    const Tensor im_info = f32({3}, {60.f, 70.f, 0.5f});
    ParamDict pd = P({{0, stride}, {1, 16}, {2, 50}, {3, 7}, {5, 12}});
    pd.set_float(4, 0.6f);
    const std::vector<Tensor> out = run_layer("Proposal", pd, {R(scores), R(deltas), R(im_info)}, 2);

    struct Box {
        double x1, y1, x2, y2, score;
    };
    std::vector<Box> boxes;
    int k = 0;
    for (float ratio : {0.5f, 1.f, 2.f})
        for (float scale : {8.f, 16.f, 32.f}) {
            const double rw = std::round(16 / std::sqrt(ratio)), rh = std::round(rw * ratio);
            const double ax1 = 8 - rw * scale / 2, ay1 = 8 - rh * scale / 2, aw = rw * scale, ah = rh * scale;
            for (int i = 0; i < h; ++i)
                for (int j = 0; j < w; ++j) {
                    auto d = [&](int comp) { return deltas.data<float>()[((k * 4 + comp) * h + i) * w + j]; };
                    const double cx = ax1 + j * stride + aw / 2 + aw * d(0), cy = ay1 + i * stride + ah / 2 + ah * d(1);
                    const double bw = aw * std::exp(d(2)), bh = ah * std::exp(d(3));
                    Box b{std::clamp(cx - bw / 2, 0.0, 69.0), std::clamp(cy - bh / 2, 0.0, 59.0),
                          std::clamp(cx + bw / 2, 0.0, 69.0), std::clamp(cy + bh / 2, 0.0, 59.0),
                          scores.data<float>()[((a + k) * h + i) * w + j]};
                    if (b.x2 - b.x1 + 1 >= 6 && b.y2 - b.y1 + 1 >= 6) boxes.push_back(b);
                }
            ++k;
        }
    std::sort(boxes.begin(), boxes.end(), [](const Box& p, const Box& q) { return p.score > q.score; });
    if (boxes.size() > 50) boxes.resize(50);
    std::vector<Box> kept;
    for (const Box& b : boxes) {
        bool keep = true;
        for (const Box& c : kept) {
            const double iw = std::min(b.x2, c.x2) - std::max(b.x1, c.x1), ih = std::min(b.y2, c.y2) - std::max(b.y1, c.y1);
            const double inter = iw > 0 && ih > 0 ? iw * ih : 0;
            const double uni = (b.x2 - b.x1) * (b.y2 - b.y1) + (c.x2 - c.x1) * (c.y2 - c.y1) - inter;
            if (inter / uni > 0.6) keep = false;
        }
        if (keep) kept.push_back(b);
    }
    if (kept.size() > 7) kept.resize(7);
    ASSERT_EQ(out[0].shape(), Shape({static_cast<int64_t>(kept.size()), 1, 4}));
    ASSERT_EQ(out[1].shape(), Shape({static_cast<int64_t>(kept.size()), 1, 1}));
    std::vector<double> want_boxes, want_scores;
    for (const Box& b : kept) {
        want_boxes.insert(want_boxes.end(), {b.x1, b.y1, b.x2, b.y2});
        want_scores.push_back(b.score);
    }
    expect_near_all(out[0], want_boxes, "boxes");
    expect_near_all(out[1], want_scores, "scores");
    EXPECT_TRUE(contains(error_of([&] { run_layer("Proposal", pd, {R(random_f32({4, 3, 4}, 1)), R(deltas), R(im_info)}); }),
                         "scores (input 0)"));
}

} // namespace
} // namespace kestrel
