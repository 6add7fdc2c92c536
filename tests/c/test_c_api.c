/* The C API (include/kestrel/c_api.h) from C99: a model from memory with a
 * layer type written in C, its outputs against a plain loop here, at 1 and 2
 * threads; failures as status codes with messages naming the layer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "expect.h"
#include "kestrel/c_api.h"

/* "Square": one float32 input, its values squared and scaled by param 0
 * (default 1), plus param 1's array's first value (default none). */
static int square_infer(void* user_data, const kestrel_params* params, int input_count,
                        const kestrel_tensor_desc* inputs, int output_count, kestrel_tensor_desc* outputs, char* error,
                        size_t error_size)
{
    (void)user_data, (void)params;
    if (input_count != 1 || output_count != 1 || inputs[0].dtype != KESTREL_FLOAT32) {
        snprintf(error, error_size, "Square takes one float32 input");
        return 1;
    }
    outputs[0] = inputs[0];
    return 0;
}

static int square_forward(void* user_data, const kestrel_params* params, int input_count,
                          const kestrel_tensor* const* inputs, int output_count, kestrel_tensor* const* outputs,
                          char* error, size_t error_size)
{
    const float* x = (const float*)kestrel_tensor_data(inputs[0]);
    float* y = (float*)kestrel_tensor_mutable_data(outputs[0]);
    const float scale = kestrel_params_float(params, 0, 1.f);
    float offset = 0.f;
    int64_t i, n = kestrel_tensor_count(inputs[0]);
    (void)input_count, (void)output_count, (void)error, (void)error_size;
    if (kestrel_params_floats(params, 1, &offset, 1) != 2 || kestrel_params_int(params, 0, 7) != 7) {
        snprintf(error, error_size, "param 1 should hold 2 values and param 0 no int");
        return 1;
    }
    for (i = 0; i < n; ++i) y[i] = scale * x[i] * x[i] + offset;
    ++*(int*)user_data;
    return 0;
}

static int refusing_forward(void* user_data, const kestrel_params* params, int input_count,
                            const kestrel_tensor* const* inputs, int output_count, kestrel_tensor* const* outputs,
                            char* error, size_t error_size)
{
    (void)user_data, (void)params, (void)input_count, (void)inputs, (void)output_count, (void)outputs;
    snprintf(error, error_size, "no luck today");
    return 1;
}

/* data (2 channels of 4x5) -> 1x1 convolution to 3 channels with bias -> ReLU
 * -> Square (scale 0.5, offset 0.25). */
static const char* kModel =
    "7767517\n"
    "4 4\n"
    "Input            data   0 1 data 0=5 1=4 2=2\n"
    "Convolution      conv   1 1 data c 0=3 1=1 5=1 6=6\n"
    "ReLU             relu   1 1 c r\n"
    "Square           sq     1 1 r y 0=0.5 -23301=2,0.25,9\n";

static const float kWeights[6] = {0.5f, -1.f, 2.f, 0.25f, -0.75f, 1.5f};
static const float kBias[3] = {0.1f, -0.2f, 0.3f};

/* The .bin: the weights with ncnn's 4-byte tag of raw float32, then the raw bias. */
static size_t model_bytes(unsigned char* bin)
{
    const unsigned int tag = 0;
    memcpy(bin, &tag, 4);
    memcpy(bin + 4, kWeights, sizeof kWeights);
    memcpy(bin + 4 + sizeof kWeights, kBias, sizeof kBias);
    return 4 + sizeof kWeights + sizeof kBias;
}

/* bf16: Options::precision BF16 (this 2-channel convolution is too small for
 * bfloat16 tiles and keeps fp32: the option is taken and changes nothing). */
static void run_model(kestrel_net* net, int threads, int blocked_layouts, int bf16, const float* x)
{
    kestrel_options options;
    kestrel_session* session = NULL;
    kestrel_tensor* y = NULL;
    const int64_t shape[3] = {2, 4, 5};
    int oc, p, bad = 0;
    kestrel_options_init(&options);
    EXPECT(options.blocked_layouts == 1, "blocked layouts by default");
    EXPECT(options.bf16 == 0, "fp32 by default");
    options.threads = threads;
    options.blocked_layouts = blocked_layouts;
    options.bf16 = bf16;
    EXPECT(kestrel_session_create(net, &options, &session) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_session_set_input(session, "data", KESTREL_FLOAT32, shape, 3, x) == KESTREL_OK, "%s",
           kestrel_last_error());
    EXPECT(kestrel_session_get(session, "y", &y) == KESTREL_OK, "%s", kestrel_last_error());
    if (y) {
        EXPECT(kestrel_tensor_dtype(y) == KESTREL_FLOAT32 && kestrel_tensor_rank(y) == 3, "dtype %d rank %d",
               (int)kestrel_tensor_dtype(y), kestrel_tensor_rank(y));
        EXPECT(kestrel_tensor_shape(y)[0] == 3 && kestrel_tensor_shape(y)[1] == 4 && kestrel_tensor_shape(y)[2] == 5,
               "shape (%lld, %lld, %lld)", (long long)kestrel_tensor_shape(y)[0],
               (long long)kestrel_tensor_shape(y)[1], (long long)kestrel_tensor_shape(y)[2]);
        for (oc = 0; oc < 3; ++oc)
            for (p = 0; p < 20; ++p) {
                double v = kBias[oc] + (double)kWeights[oc * 2] * x[p] + (double)kWeights[oc * 2 + 1] * x[20 + p];
                const double want = (v > 0 ? 0.5 * v * v : 0) + 0.25;
                const float got = ((const float*)kestrel_tensor_data(y))[oc * 20 + p];
                if (!(fabs(got - want) <= 1e-5 * (fabs(want) + 1)) && ++bad <= 3)
                    EXPECT(0, "threads %d: y[%d][%d] = %g, expected %g", threads, oc, p, got, want);
            }
    }
    kestrel_tensor_destroy(y);
    kestrel_session_destroy(session);
}

int main(void)
{
    int squares = 0, i;
    unsigned char bin[64];
    const size_t bin_size = model_bytes(bin);
    float x[40];
    kestrel_net* net = NULL;
    kestrel_session* session = NULL;
    kestrel_tensor* t = NULL;
    kestrel_layer_callbacks square, refusing;
    const int64_t shape[3] = {2, 4, 5};
    for (i = 0; i < 40; ++i) x[i] = (float)((i * 37) % 23) / 11.f - 1.f;

    square.user_data = &squares;
    square.infer = square_infer;
    square.forward = square_forward;
    EXPECT(kestrel_register_layer("Square", &square) == KESTREL_OK, "%s", kestrel_last_error());

    EXPECT(kestrel_net_create(&net) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_param_mem(net, kModel) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_model_mem(net, bin, bin_size) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_input_count(net) == 1 && strcmp(kestrel_net_input_name(net, 0), "data") == 0, "inputs");
    EXPECT(kestrel_net_output_count(net) == 1 && strcmp(kestrel_net_output_name(net, 0), "y") == 0, "outputs");
    EXPECT(kestrel_net_input_name(net, 1) == NULL, "a name past the end");
    run_model(net, 1, 1, 0, x);
    run_model(net, 2, 1, 0, x);
    run_model(net, 2, 0, 0, x);
    run_model(net, 1, 1, 1, x);
    EXPECT(squares == 4, "the C layer ran %d times", squares);

    /* Failures: codes and messages. */
    EXPECT(kestrel_net_load_param(NULL, "x") == KESTREL_ERROR_ARGUMENT, "a NULL net");
    EXPECT(strstr(kestrel_last_error(), "net") != NULL, "%s", kestrel_last_error());
    EXPECT(kestrel_session_create(net, NULL, &session) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_session_set_input(session, "nothing", KESTREL_FLOAT32, shape, 3, x) != KESTREL_OK,
           "an unknown input");
    EXPECT(kestrel_session_set_input(session, "data", KESTREL_FLOAT32, shape, 9, x) == KESTREL_ERROR_ARGUMENT,
           "rank 9");
    EXPECT(kestrel_session_set_input(session, "data", KESTREL_FLOAT32, shape, 3, x) == KESTREL_OK, "%s",
           kestrel_last_error());
    EXPECT(kestrel_session_get(session, "nothing", &t) != KESTREL_OK && t == NULL, "an unknown blob");
    kestrel_session_destroy(session);
    kestrel_net_destroy(net);

    EXPECT(kestrel_net_create(&net) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_param_mem(net, "7767517\n2 2\nInput data 0 1 data 0=3\nBogus b 1 1 data y\n") ==
               KESTREL_ERROR_FAILED,
           "an unknown layer type");
    EXPECT(strstr(kestrel_last_error(), "Bogus") != NULL && strstr(kestrel_last_error(), ":4") != NULL,
           "the message names the line and the type: %s", kestrel_last_error());
    kestrel_net_destroy(net);

    /* Names are the model's whatever they hold: the .param escapes them
     * (%XX) and the C caller passes and reads them unescaped. */
    EXPECT(kestrel_net_create(&net) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_param_mem(net, "7767517\n2 2\nInput in 0 1 x%20in/\xc3\xa9 0=3\n"
                                           "AbsVal abs 1 1 x%20in/\xc3\xa9 %221_minute%3Dtimer%22\n") == KESTREL_OK,
           "%s", kestrel_last_error());
    EXPECT(strcmp(kestrel_net_input_name(net, 0), "x in/\xc3\xa9") == 0, "input name %s", kestrel_net_input_name(net, 0));
    EXPECT(strcmp(kestrel_net_output_name(net, 0), "\"1_minute=timer\"") == 0, "output name %s",
           kestrel_net_output_name(net, 0));
    EXPECT(kestrel_session_create(net, NULL, &session) == KESTREL_OK, "%s", kestrel_last_error());
    {
        const int64_t three[1] = {3};
        const float v[3] = {-1.5f, 2.f, -0.25f};
        EXPECT(kestrel_session_set_input(session, "x in/\xc3\xa9", KESTREL_FLOAT32, three, 1, v) == KESTREL_OK, "%s",
               kestrel_last_error());
        EXPECT(kestrel_session_get(session, "\"1_minute=timer\"", &t) == KESTREL_OK, "%s", kestrel_last_error());
        if (t)
            for (i = 0; i < 3; ++i)
                EXPECT(((const float*)kestrel_tensor_data(t))[i] == fabsf(v[i]), "|%g| read back as %g", v[i],
                       ((const float*)kestrel_tensor_data(t))[i]);
    }
    kestrel_tensor_destroy(t);
    t = NULL;
    kestrel_session_destroy(session);
    kestrel_net_destroy(net);

    refusing = square;
    refusing.forward = refusing_forward;
    EXPECT(kestrel_register_layer("Refusing", &refusing) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_create(&net) == KESTREL_OK, "%s", kestrel_last_error());
    EXPECT(kestrel_net_load_param_mem(net, "7767517\n2 2\nInput data 0 1 data 0=3\nRefusing nope 1 1 data y\n") ==
               KESTREL_OK,
           "%s", kestrel_last_error());
    EXPECT(kestrel_session_create(net, NULL, &session) == KESTREL_OK, "%s", kestrel_last_error());
    {
        const int64_t three[1] = {3};
        EXPECT(kestrel_session_set_input(session, "data", KESTREL_FLOAT32, three, 1, x) == KESTREL_OK, "%s",
               kestrel_last_error());
    }
    EXPECT(kestrel_session_get(session, "y", &t) == KESTREL_ERROR_FAILED, "a layer that refuses");
    EXPECT(strstr(kestrel_last_error(), "no luck today") != NULL && strstr(kestrel_last_error(), "nope") != NULL,
           "the message names the layer and its reason: %s", kestrel_last_error());
    kestrel_session_destroy(session);
    kestrel_net_destroy(net);

    if (failures) fprintf(stderr, "%d failures\n", failures);
    else printf("C API: all checks passed\n");
    return failures ? 1 : 0;
}
