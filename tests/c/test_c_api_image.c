/* The C API's image pre-processing (and per-layer callbacks) from C99, against
 * plain loops here: pixels with a row stride to a normalized float tensor, a
 * 2x area downscale as block means, NV21/NV12/I420 frames against BT.601's
 * formula within one level. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "kestrel/c_api.h"

enum { W = 6, H = 4, STRIDE = W * 3 + 5 };

static unsigned char pixel(int y, int x, int c) { return (unsigned char)((y * 53 + x * 29 + c * 71) % 256); }

static void test_from_pixels(void)
{
    unsigned char bgr[H * STRIDE];
    const float mean[3] = {10.f, 20.f, 30.f}, norm[3] = {0.5f, 0.25f, 2.f};
    kestrel_from_pixels_options o;
    kestrel_tensor* t = NULL;
    int y, x, c, bad = 0;
    memset(bgr, 0xEE, sizeof bgr); /* the padding past each row must not be read as pixels */
    for (y = 0; y < H; ++y)
        for (x = 0; x < W; ++x)
            for (c = 0; c < 3; ++c) bgr[y * STRIDE + x * 3 + c] = pixel(y, x, c);

    kestrel_from_pixels_options_init(&o);
    o.to = KESTREL_PIXEL_RGB;
    o.mean = mean;
    o.norm = norm;
    EXPECT(kestrel_image_from_pixels(bgr, W, H, STRIDE, KESTREL_PIXEL_BGR, &o, &t) == KESTREL_OK, "%s",
           kestrel_last_error());
    if (t) {
        const float* v = (const float*)kestrel_tensor_data(t);
        EXPECT(kestrel_tensor_rank(t) == 3 && kestrel_tensor_shape(t)[0] == 3 && kestrel_tensor_shape(t)[1] == H &&
                   kestrel_tensor_shape(t)[2] == W,
               "shape");
        for (c = 0; c < 3; ++c)
            for (y = 0; y < H; ++y)
                for (x = 0; x < W; ++x) {
                    const float want = ((float)pixel(y, x, 2 - c) - mean[c]) * norm[c];
                    if (v[(c * H + y) * W + x] != want && ++bad <= 3)
                        EXPECT(0, "(%d, %d, %d) = %g, expected %g", c, y, x, v[(c * H + y) * W + x], want);
                }
    }
    kestrel_tensor_destroy(t);

    /* Halved by area: each output the mean of a 2x2 block, rounded, as float. */
    kestrel_from_pixels_options_init(&o);
    o.to = KESTREL_PIXEL_BGR;
    o.width = W / 2;
    o.height = H / 2;
    o.filter = KESTREL_FILTER_AREA;
    t = NULL;
    EXPECT(kestrel_image_from_pixels(bgr, W, H, STRIDE, KESTREL_PIXEL_BGR, &o, &t) == KESTREL_OK, "%s",
           kestrel_last_error());
    if (t) {
        const float* v = (const float*)kestrel_tensor_data(t);
        for (c = 0; c < 3; ++c)
            for (y = 0; y < H / 2; ++y)
                for (x = 0; x < W / 2; ++x) {
                    const int sum = pixel(2 * y, 2 * x, c) + pixel(2 * y, 2 * x + 1, c) + pixel(2 * y + 1, 2 * x, c) +
                                    pixel(2 * y + 1, 2 * x + 1, c);
                    const float want = (float)((sum + 2) / 4);
                    const float got = v[(c * (H / 2) + y) * (W / 2) + x];
                    if (got != want && ++bad <= 3) EXPECT(0, "area (%d, %d, %d) = %g, expected %g", c, y, x, got, want);
                }
    }
    kestrel_tensor_destroy(t);

    o.filter = (kestrel_filter)42;
    EXPECT(kestrel_image_from_pixels(bgr, W, H, 0, KESTREL_PIXEL_BGR, &o, &t) == KESTREL_ERROR_ARGUMENT && t == NULL,
           "an unknown filter");
    kestrel_from_pixels_options_init(&o);
    EXPECT(kestrel_image_from_pixels(bgr, W, H, 5, KESTREL_PIXEL_BGR, &o, &t) == KESTREL_ERROR_FAILED,
           "a stride shorter than a row");
    EXPECT(strstr(kestrel_last_error(), "stride") != NULL, "%s", kestrel_last_error());
}

static unsigned char clamp255(double v) { return (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : floor(v + 0.5)); }

/* BT.601 video range: the formula as the standard writes it. */
static void bt601(int y, int u, int v, unsigned char rgb[3])
{
    const double yy = 1.164 * (y < 16 ? 0 : y - 16);
    rgb[0] = clamp255(yy + 1.596 * (v - 128));
    rgb[1] = clamp255(yy - 0.813 * (v - 128) - 0.391 * (u - 128));
    rgb[2] = clamp255(yy + 2.018 * (u - 128));
}

static void test_yuv(void)
{
    enum { FW = 8, FH = 6 };
    unsigned char frame[FW * FH * 3 / 2];
    int layout, i, y, x, c, bad = 0;
    for (i = 0; i < (int)sizeof frame; ++i) frame[i] = (unsigned char)((i * 97 + 13) % 256);
    for (layout = 0; layout < 3; ++layout) { /* NV21, NV12, I420 */
        kestrel_tensor* t = NULL;
        const kestrel_status s = layout == 2 ? kestrel_image_i420_to_pixels(frame, FW, FH, KESTREL_PIXEL_BGR, &t)
                                             : kestrel_image_yuv420sp_to_pixels(frame, FW, FH, layout == 0,
                                                                                KESTREL_PIXEL_BGR, &t);
        EXPECT(s == KESTREL_OK, "%s", kestrel_last_error());
        if (!t) continue;
        for (y = 0; y < FH; ++y)
            for (x = 0; x < FW; ++x) {
                const unsigned char* chroma = frame + FW * FH;
                int u, v;
                unsigned char want[3];
                const unsigned char* got = (const unsigned char*)kestrel_tensor_data(t) + (y * FW + x) * 3;
                if (layout == 2) {
                    u = chroma[(y / 2) * (FW / 2) + x / 2];
                    v = chroma[FW * FH / 4 + (y / 2) * (FW / 2) + x / 2];
                } else {
                    const unsigned char* pair = chroma + (y / 2) * FW + (x / 2) * 2;
                    u = pair[layout == 0 ? 1 : 0];
                    v = pair[layout == 0 ? 0 : 1];
                }
                bt601(frame[y * FW + x], u, v, want);
                for (c = 0; c < 3; ++c) /* BGR */
                    if (abs(got[c] - want[2 - c]) > 1 && ++bad <= 3)
                        EXPECT(0, "layout %d (%d, %d) channel %d = %d, expected %d", layout, y, x, c, got[c],
                               want[2 - c]);
            }
        kestrel_tensor_destroy(t);
    }
    {
        kestrel_tensor* t = NULL;
        EXPECT(kestrel_image_yuv420sp_to_pixels(frame, 7, 6, 1, KESTREL_PIXEL_RGB, &t) == KESTREL_ERROR_FAILED,
               "an odd width");
        EXPECT(kestrel_image_yuv420sp_to_pixels(frame, 8, 6, 1, KESTREL_PIXEL_GRAY, &t) == KESTREL_ERROR_FAILED,
               "gray from YUV");
    }
}

/* Per-layer callbacks: every layer seen before and after, outputs computed after. */
struct seen {
    int before, after, relu_negative;
};

static void on_before(void* user_data, const char* type, const char* name, int input_count,
                      const kestrel_tensor* const* inputs, int output_count, const kestrel_tensor* const* outputs)
{
    (void)type, (void)name, (void)input_count, (void)inputs, (void)output_count, (void)outputs;
    ((struct seen*)user_data)->before++;
}

static void on_after(void* user_data, const char* type, const char* name, int input_count,
                     const kestrel_tensor* const* inputs, int output_count, const kestrel_tensor* const* outputs)
{
    struct seen* s = (struct seen*)user_data;
    (void)name, (void)input_count, (void)inputs;
    s->after++;
    if (strcmp(type, "ReLU") == 0 && output_count == 1) {
        const float* v = (const float*)kestrel_tensor_data(outputs[0]);
        int64_t i;
        for (i = 0; i < kestrel_tensor_count(outputs[0]); ++i) s->relu_negative += v[i] < 0;
    }
}

static void test_callbacks(void)
{
    kestrel_net* net = NULL;
    kestrel_session* session = NULL;
    kestrel_tensor* t = NULL;
    struct seen seen = {0, 0, 0};
    const float x[4] = {-1.f, 2.f, -3.f, 4.f};
    const int64_t shape[1] = {4};
    EXPECT(kestrel_net_create(&net) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_param_mem(net, "7767517\n3 3\nInput data 0 1 data 0=4\nReLU relu 1 1 data r\n"
                                           "Sigmoid sig 1 1 r y\n") == KESTREL_OK,
           "%s", kestrel_last_error());
    EXPECT(kestrel_session_create(net, NULL, &session) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_session_set_callbacks(session, on_before, on_after, &seen) == KESTREL_OK, "%s",
           kestrel_last_error());
    EXPECT(kestrel_session_set_input(session, "data", KESTREL_FLOAT32, shape, 1, x) == KESTREL_OK, "%s",
           kestrel_last_error());
    EXPECT(kestrel_session_get(session, "y", &t) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(seen.before >= 2 && seen.before == seen.after && seen.relu_negative == 0, "before %d after %d negative %d",
           seen.before, seen.after, seen.relu_negative);
    EXPECT(kestrel_session_set_callbacks(NULL, on_before, NULL, NULL) == KESTREL_ERROR_ARGUMENT, "a NULL session");
    kestrel_tensor_destroy(t);
    kestrel_session_destroy(session);
    kestrel_net_destroy(net);
}

int main(void)
{
    test_from_pixels();
    test_yuv();
    test_callbacks();
    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("C API images and callbacks: all checks passed\n");
    return failures ? 1 : 0;
}
