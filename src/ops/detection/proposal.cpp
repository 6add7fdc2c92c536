// Proposal (ncnn, Faster R-CNN's region proposal layer). Params 0=feat_stride
// (16) 1=base_size (16) 2=pre_nms_topN (6000) 3=after_nms_topN (300)
// 4=nms_thresh (0.7) 5=min_size (16); anchors as ncnn fixes them: ratios 0.5,
// 1, 2 times scales 8, 16, 32 (A = 9), each centred on the base_size cell.
// Inputs: scores (2A, H, W) (background, then foreground for each anchor),
// box deltas (4A, H, W) (dx, dy, dw, dh per anchor), im_info [im_h, im_w,
// scale]. Each anchor at each cell, shifted by feat_stride, is moved by its
// deltas, clipped to the image, kept when both sides are >= min_size*scale,
// ordered by foreground score (ncnn's quicksort order among ties), cut to
// pre_nms_topN, thinned by NMS at nms_thresh, cut to after_nms_topN.
// Outputs: the boxes (n, 1, 4) [x1, y1, x2, y2] and optionally their scores
// (n, 1, 1), n known only when it runs.
#include <cmath>

#include "ops/common/op_util.h"
#include "ops/detection/nms.h"

namespace kestrel {

namespace {

class Proposal : public Op {
public:
    void load_param(const ParamDict& pd) override
    {
        feat_stride_ = positive_param(pd, 0, 16, "feat_stride");
        base_size_ = positive_param(pd, 1, 16, "base_size");
        pre_nms_ = pd.get_int(2, 6000);
        after_nms_ = pd.get_int(3, 300);
        nms_thresh_ = pd.get_float(4, 0.7f);
        min_size_ = pd.get_int(5, 16);
        check(after_nms_ >= 0, "after_nms_topN (param 3) must be >= 0, got ", after_nms_);
        anchors_ = make_anchors();
    }

    void infer(const std::vector<TensorDesc>& in, std::vector<TensorDesc>& out) const override
    {
        expect_input_count(in, 3, 3);
        check(out.size() == 1 || out.size() == 2, "expects 1 or 2 outputs (boxes, scores), got ", out.size());
        for (const TensorDesc& d : in) expect_f32(d);
        const Shape &score = in[0].shape, &deltas = in[1].shape;
        const int64_t a = static_cast<int64_t>(anchors_.size());
        check(score.size() == 3 && score[0] == 2 * a, "scores (input 0) must be (", 2 * a, ", H, W), got ", shape_str(score));
        check(deltas == Shape({4 * a, score[1], score[2]}), "box deltas (input 1) must be (", 4 * a, ", ", score[1], ", ",
              score[2], "), got ", shape_str(deltas));
        check(shape_numel(in[2].shape) >= 3, "im_info (input 2) must hold [im_h, im_w, scale], got ", shape_str(in[2].shape));
        const int64_t bound = std::min<int64_t>(after_nms_, a * score[1] * score[2]);
        out[0] = TensorDesc(Shape{bound, 1, 4});
        if (out.size() == 2) out[1] = TensorDesc(Shape{bound, 1, 1});
    }

    bool dynamic_output_shape() const override { return true; }

    void forward(const std::vector<Tensor>& in, std::vector<Tensor>& out, const ExecContext&) const override
    {
        std::vector<detection::Candidate> boxes = candidates(in);
        detection::sort_by_score_like_ncnn(boxes);
        if (pre_nms_ > 0 && pre_nms_ < static_cast<int64_t>(boxes.size())) boxes.resize(static_cast<size_t>(pre_nms_));
        std::vector<detection::Candidate> kept = detection::nms_sorted(boxes, nms_thresh_, detection::IouTest::Ratio);
        if (static_cast<int64_t>(kept.size()) > after_nms_) kept.resize(static_cast<size_t>(after_nms_));
        const int64_t n = static_cast<int64_t>(kept.size());
        float* rois = out[0].data<float>();
        for (int64_t i = 0; i < n; ++i) {
            const detection::Candidate& c = kept[static_cast<size_t>(i)];
            float* r = rois + i * 4;
            r[0] = c.xmin, r[1] = c.ymin, r[2] = c.xmax, r[3] = c.ymax;
            if (out.size() == 2) out[1].data<float>()[i] = c.score;
        }
        for (Tensor& t : out) t = detection::leading_rows(t, n);
    }

private:
    struct Anchor {
        float x1, y1, x2, y2;
    };

    std::vector<Anchor> make_anchors() const
    {
        std::vector<Anchor> anchors;
        const float c = static_cast<float>(base_size_) * 0.5f;
        for (float ratio : {0.5f, 1.f, 2.f}) {
            const float rw = std::round(static_cast<float>(base_size_) / std::sqrt(ratio));
            const float rh = std::round(rw * ratio);
            for (float scale : {8.f, 16.f, 32.f})
                anchors.push_back({c - rw * scale * 0.5f, c - rh * scale * 0.5f, c + rw * scale * 0.5f, c + rh * scale * 0.5f});
        }
        return anchors;
    }

    // Every anchor at every cell, decoded, clipped and size-filtered, in ncnn's order.
    std::vector<detection::Candidate> candidates(const std::vector<Tensor>& in) const
    {
        const int64_t h = in[0].dim(1), w = in[0].dim(2), a_count = static_cast<int64_t>(anchors_.size());
        const float* im = in[2].data<float>();
        const float im_h = im[0], im_w = im[1], min_box = static_cast<float>(min_size_) * im[2];
        const float stride = static_cast<float>(feat_stride_);
        std::vector<detection::Candidate> out;
        for (int64_t a = 0; a < a_count; ++a) {
            const Anchor& an = anchors_[static_cast<size_t>(a)];
            const float aw = an.x2 - an.x1, ah = an.y2 - an.y1;
            const float* d = in[1].data<float>() + a * 4 * h * w;
            const float* fg = in[0].data<float>() + (a_count + a) * h * w;
            for (int64_t i = 0; i < h; ++i)
                for (int64_t j = 0; j < w; ++j) {
                    const int64_t at = i * w + j;
                    const float cx = an.x1 + static_cast<float>(j) * stride + aw * 0.5f;
                    const float cy = an.y1 + static_cast<float>(i) * stride + ah * 0.5f;
                    const float px = cx + aw * d[at], py = cy + ah * d[h * w + at];
                    const float pw = aw * std::exp(d[2 * h * w + at]), ph = ah * std::exp(d[3 * h * w + at]);
                    detection::Candidate c;
                    c.xmin = std::max(std::min(px - pw * 0.5f, im_w - 1), 0.f);
                    c.ymin = std::max(std::min(py - ph * 0.5f, im_h - 1), 0.f);
                    c.xmax = std::max(std::min(px + pw * 0.5f, im_w - 1), 0.f);
                    c.ymax = std::max(std::min(py + ph * 0.5f, im_h - 1), 0.f);
                    if (c.xmax - c.xmin + 1 < min_box || c.ymax - c.ymin + 1 < min_box) continue;
                    c.score = fg[at];
                    c.area = detection::corner_area(c);
                    out.push_back(c);
                }
        }
        return out;
    }

    int feat_stride_ = 16, base_size_ = 16, min_size_ = 16;
    int64_t pre_nms_ = 6000, after_nms_ = 300;
    float nms_thresh_ = 0.7f;
    std::vector<Anchor> anchors_;
};

} // namespace

std::unique_ptr<Op> make_proposal() { return std::make_unique<Proposal>(); }

} // namespace kestrel
