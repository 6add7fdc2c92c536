// Helpers shared by the detection layers (DetectionOutput, YoloDetectionOutput,
// Yolov3DetectionOutput): boxes, ncnn's score ordering, greedy NMS, and the
// (n, 6) detection table whose row count is only known after forward.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kestrel/error.h"
#include "kestrel/op.h"
#include "kestrel/param_dict.h"
#include "kestrel/tensor.h"

namespace kestrel::detection {

// One candidate: corners, score, label and the area NMS uses. ncnn's layers
// disagree on the area (DetectionOutput and YoloDetectionOutput use
// (xmax-xmin)*(ymax-ymin), Yolov3DetectionOutput the decoded w*h), so the
// producer fills it.
struct Candidate {
    float xmin = 0, ymin = 0, xmax = 0, ymax = 0;
    float score = 0;
    float area = 0;
    int label = 0;
};

inline float corner_area(const Candidate& c) { return (c.xmax - c.xmin) * (c.ymax - c.ymin); }

// Overlap area; exactly 0 when the boxes are apart (touching edges give 0 too).
inline float intersection_area(const Candidate& a, const Candidate& b)
{
    if (a.xmin > b.xmax || a.xmax < b.xmin || a.ymin > b.ymax || a.ymax < b.ymin) return 0.f;
    const float iw = std::min(a.xmax, b.xmax) - std::max(a.xmin, b.xmin);
    const float ih = std::min(a.ymax, b.ymax) - std::max(a.ymin, b.ymin);
    return iw * ih;
}

// Orders candidates by descending score the way ncnn does. ncnn sorts with a
// middle-pivot Hoare-partition quicksort, which is not stable: among equal
// scores the resulting order is a function of that algorithm only. The order of
// ties is observable (it decides which of two equal-score boxes survives NMS;
// zero-weight benchmark models give nothing but ties), so we partition the
// same way. The index guards only matter for NaN scores, where the plain
// scheme's scans are not bounded by the pivot.
inline void sort_by_score_like_ncnn(std::vector<Candidate>& v, int64_t lo, int64_t hi)
{
    while (lo < hi) {
        const float pivot = v[static_cast<size_t>((lo + hi) / 2)].score;
        int64_t i = lo, j = hi;
        while (i <= j) {
            while (i <= hi && v[i].score > pivot) ++i;
            while (j >= lo && v[j].score < pivot) --j;
            if (i <= j) {
                std::swap(v[i], v[j]);
                ++i;
                --j;
            }
        }
        // Left part [lo, j] first (as ncnn recurses), then continue with [i, hi].
        if (lo < j) sort_by_score_like_ncnn(v, lo, j);
        lo = i;
    }
}

inline void sort_by_score_like_ncnn(std::vector<Candidate>& v)
{
    if (v.size() > 1) sort_by_score_like_ncnn(v, 0, static_cast<int64_t>(v.size()) - 1);
}

// How NMS compares overlap with the threshold. Both suppress a box whose
// overlap with an already kept box exceeds the threshold, but ncnn writes it
// two ways that differ for degenerate boxes (union 0) and in rounding:
//   Ratio:   inter / union > t     (DetectionOutput, YoloDetectionOutput)
//   Product: inter > t * union     (Yolov3DetectionOutput)
enum class IouTest { Ratio, Product };

// Greedy NMS over candidates already sorted by descending score; returns the
// kept ones in order. Labels are ignored (callers group by class themselves).
inline std::vector<Candidate> nms_sorted(const std::vector<Candidate>& sorted, float threshold, IouTest test)
{
    std::vector<Candidate> kept;
    for (const Candidate& a : sorted) {
        bool keep = true;
        for (const Candidate& b : kept) {
            const float inter = intersection_area(a, b);
            const float uni = a.area + b.area - inter;
            const bool overlaps = test == IouTest::Ratio ? inter / uni > threshold : inter > threshold * uni;
            if (overlaps) {
                keep = false;
                break;
            }
        }
        if (keep) kept.push_back(a);
    }
    return kept;
}

// Detection layers produce a table of rows (label, score, xmin, ymin, xmax,
// ymax) whose length is known only after NMS; ncnn returns an empty Mat when
// nothing is found. The ops declare dynamic_output_shape(): infer() gives the
// upper bound (bound, 6); forward() writes the rows, marks the unused tail
// (label -1, zeros: visible only to callers that keep the original buffer) and
// replaces outputs[0] with a view of the first n rows that keeps the buffer
// alive, which the session adopts: (n, 6), or (0, 6) when nothing is found.
inline Tensor leading_rows(const Tensor& t, int64_t rows)
{
    check(t.rank() >= 1 && rows >= 0 && rows <= t.dim(0), "internal: cannot take ", rows, " rows of ",
          shape_str(t.shape()));
    Shape s = t.shape();
    s[0] = rows;
    auto keep = std::make_shared<Tensor>(t);
    void* data = keep->raw();
    return Tensor::wrap_shared(std::move(keep), data, std::move(s), t.dtype());
}

inline void write_detections(const std::vector<Candidate>& dets, float label_offset, std::vector<Tensor>& outputs)
{
    Tensor& out = outputs[0];
    check(out.rank() == 2 && out.dim(1) == 6 && out.dtype() == DType::F32,
          "internal: detection output buffer has shape ", shape_str(out.shape()));
    const int64_t n = static_cast<int64_t>(dets.size());
    check(n <= out.dim(0), "internal: ", n, " detections exceed the inferred bound ", out.dim(0));
    float* p = out.data<float>();
    for (int64_t i = 0; i < n; ++i) {
        const Candidate& d = dets[static_cast<size_t>(i)];
        float* r = p + i * 6;
        r[0] = static_cast<float>(d.label) + label_offset;
        r[1] = d.score;
        r[2] = d.xmin;
        r[3] = d.ymin;
        r[4] = d.xmax;
        r[5] = d.ymax;
    }
    for (int64_t i = n; i < out.dim(0); ++i) {
        float* r = p + i * 6;
        r[0] = -1.f;
        std::fill(r + 1, r + 6, 0.f);
    }
    out = leading_rows(out, n);
}

// A float-array param that ncnn reads as raw float words. The text format
// decides int vs float from the first element, so converters write such arrays
// as the integer bit patterns of floats (Yolov3DetectionOutput's mask:
// "-23305=6,1077936128,..." is 3.0f,...). Words that are all in [0, 2^23) would
// be zero or denormal floats, which no such param means; those arrays are read
// as plain integers ("5=3,4,5,0,1,2"), where ncnn would read denormals.
inline std::vector<float> float_words_param(const ParamDict& pd, int id)
{
    if (pd.kind(id) != ParamDict::Kind::IntArray && pd.kind(id) != ParamDict::Kind::Int) return pd.get_floats(id);
    const std::vector<int> words = pd.get_ints(id);
    const bool plain_ints =
        std::all_of(words.begin(), words.end(), [](int w) { return w >= 0 && w < (1 << 23); });
    std::vector<float> v;
    for (int w : words) {
        if (plain_ints) {
            v.push_back(static_cast<float>(w));
        } else {
            const uint32_t bits = static_cast<uint32_t>(w);
            float f;
            static_assert(sizeof f == sizeof bits, "float is 32-bit");
            std::copy_n(reinterpret_cast<const unsigned char*>(&bits), sizeof f, reinterpret_cast<unsigned char*>(&f));
            v.push_back(f);
        }
    }
    return v;
}

} // namespace kestrel::detection
