/* Kestrel's C API: load an ncnn model, run it, read any blob, and add layer
 * types written in C. C99; every function is safe to call from C++ too.
 *
 * Every call that can fail returns a kestrel_status; on failure
 * kestrel_last_error() gives the message (one line, naming the file, line and
 * layer where they are known) until the same thread's next failing call.
 * Objects are opaque handles, each freed by its destroy function (which
 * accepts NULL). A net may be shared by sessions on any threads once loaded;
 * a session is used by one thread at a time.
 *
 *     kestrel_net* net;
 *     kestrel_net_create(&net);
 *     if (kestrel_net_load_param(net, "model.param") != KESTREL_OK ||
 *         kestrel_net_load_model(net, "model.bin") != KESTREL_OK)
 *         fprintf(stderr, "%s\n", kestrel_last_error());
 */
#ifndef KESTREL_C_API_H
#define KESTREL_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kestrel_status {
    KESTREL_OK = 0,
    KESTREL_ERROR_ARGUMENT = 1,      /* a null handle or pointer, a bad rank or dtype */
    KESTREL_ERROR_FAILED = 2,        /* the model, an input or a layer refused: see the message */
    KESTREL_ERROR_TOO_LARGE = 3,     /* a weight or the activations exceed the limits */
    KESTREL_ERROR_OUT_OF_MEMORY = 4,
    KESTREL_ERROR_INTERNAL = 5
} kestrel_status;

/* The element types, in the order of kestrel::DType. */
typedef enum kestrel_dtype {
    KESTREL_FLOAT32 = 0,
    KESTREL_FLOAT16,
    KESTREL_BFLOAT16,
    KESTREL_FLOAT64,
    KESTREL_INT8,
    KESTREL_UINT8,
    KESTREL_INT16,
    KESTREL_UINT16,
    KESTREL_INT32,
    KESTREL_UINT32,
    KESTREL_INT64,
    KESTREL_UINT64,
    KESTREL_BOOL
} kestrel_dtype;

#define KESTREL_MAX_RANK 8

typedef struct kestrel_net kestrel_net;
typedef struct kestrel_session kestrel_session;
typedef struct kestrel_tensor kestrel_tensor;

/* The message of this thread's last failed call ("" if none). */
const char* kestrel_last_error(void);

/* ---- options ------------------------------------------------------------ */

typedef struct kestrel_options {
    int threads;        /* a session's threads (default 1) */
    int fuse_layers;    /* fuse activations, paddings and residual sums into convolutions (default 1) */
    int winograd;       /* 3x3 convolutions by Winograd where faster (default 1) */
    int fp16_weights;   /* InnerProduct weights kept as half floats (default 0) */
    int blocked_layouts; /* a session keeps activations in channel blocks between layers that take them
                            (default 1; 0: every blob plain NCHW) */
    int bf16;           /* a session multiplies convolutions, InnerProduct/Gemm and attention projections
                           in bfloat16 where the CPU can (Options::precision BF16; default 0) */
} kestrel_options;

/* The defaults above. */
void kestrel_options_init(kestrel_options* options);

/* ---- nets --------------------------------------------------------------- */

kestrel_status kestrel_net_create(kestrel_net** net);
void kestrel_net_destroy(kestrel_net* net);
/* The load options of `options` (fuse_layers, winograd, fp16_weights), before loading. */
kestrel_status kestrel_net_set_options(kestrel_net* net, const kestrel_options* options);
/* A model of any format Kestrel reads, told from the file's content (ncnn
 * .param/.param.bin with its weights beside it or at `weights`, which may be
 * NULL; ONNX once kestrel_register_onnx() was called), as kestrel/model_file.h's
 * load_model_file. The net's fuse_layers option turns the optimizer on. */
kestrel_status kestrel_net_load(kestrel_net* net, const char* path, const char* weights);
/* An ncnn .param (text) from a file or from memory (NUL-terminated text). */
kestrel_status kestrel_net_load_param(kestrel_net* net, const char* path);
kestrel_status kestrel_net_load_param_mem(kestrel_net* net, const char* text);
/* The ncnn .bin weights, after the param. */
kestrel_status kestrel_net_load_model(kestrel_net* net, const char* path);
kestrel_status kestrel_net_load_model_mem(kestrel_net* net, const void* data, size_t size);
/* An ONNX model (its weights with it), converted in memory: defined in the
 * kestrel_onnx library (built where Debian's libonnx-dev is), which a program
 * that calls it links as well. */
kestrel_status kestrel_net_load_onnx(kestrel_net* net, const char* path);
/* Lets kestrel_net_load read ONNX models (also in kestrel_onnx). */
kestrel_status kestrel_register_onnx(void);
/* A TensorFlow Lite model (.tflite flatbuffer, its weights inside) from
 * memory; the bytes are verified before any field is read and may be freed
 * after the call. Files load through kestrel_net_load. */
kestrel_status kestrel_net_load_tflite_mem(kestrel_net* net, const void* data, size_t size);
/* The graph's inputs and outputs: their count, and the name of the i-th
 * (valid while the net lives), or NULL past the end. */
int kestrel_net_input_count(const kestrel_net* net);
const char* kestrel_net_input_name(const kestrel_net* net, int i);
int kestrel_net_output_count(const kestrel_net* net);
const char* kestrel_net_output_name(const kestrel_net* net, int i);

/* ---- sessions ----------------------------------------------------------- */

/* A session over a loaded net (options: NULL for the defaults). */
kestrel_status kestrel_session_create(const kestrel_net* net, const kestrel_options* options,
                                      kestrel_session** session);
void kestrel_session_destroy(kestrel_session* session);
/* Input `name`: `rank` dims of `shape` (ncnn's models: (c, h, w)) of `dtype`
 * values read from `data` (copied). */
kestrel_status kestrel_session_set_input(kestrel_session* session, const char* name, kestrel_dtype dtype,
                                         const int64_t* shape, int rank, const void* data);
/* Runs what blob `name` needs and returns it as a new tensor (the caller
 * destroys it); any blob of the graph, not only its outputs. */
kestrel_status kestrel_session_get(kestrel_session* session, const char* name, kestrel_tensor** tensor);

/* Called before and after each layer runs (debugging, profiling): the
 * layer's type and name and its tensors, valid only during the call (outputs
 * not yet computed in `before`). Either may be NULL; both NULL removes them. */
typedef void (*kestrel_layer_callback)(void* user_data, const char* layer_type, const char* layer_name,
                                       int input_count, const kestrel_tensor* const* inputs, int output_count,
                                       const kestrel_tensor* const* outputs);
kestrel_status kestrel_session_set_callbacks(kestrel_session* session, kestrel_layer_callback before,
                                             kestrel_layer_callback after, void* user_data);

/* ---- tensors ------------------------------------------------------------ */

void kestrel_tensor_destroy(kestrel_tensor* tensor);
kestrel_dtype kestrel_tensor_dtype(const kestrel_tensor* tensor);
int kestrel_tensor_rank(const kestrel_tensor* tensor);
/* The dims (rank of them). */
const int64_t* kestrel_tensor_shape(const kestrel_tensor* tensor);
int64_t kestrel_tensor_count(const kestrel_tensor* tensor); /* elements */
/* The values, dense in row-major order. */
const void* kestrel_tensor_data(const kestrel_tensor* tensor);
void* kestrel_tensor_mutable_data(kestrel_tensor* tensor);

/* ---- image pre-processing (see kestrel/image.h) -------------------------- */

typedef enum kestrel_pixel_format {
    KESTREL_PIXEL_RGB = 0,
    KESTREL_PIXEL_BGR,
    KESTREL_PIXEL_GRAY,
    KESTREL_PIXEL_RGBA,
    KESTREL_PIXEL_BGRA
} kestrel_pixel_format;

/* TensorFlow's resize filters (kestrel/image.h says what each one is). */
typedef enum kestrel_filter {
    KESTREL_FILTER_NEAREST = 0,
    KESTREL_FILTER_BILINEAR,
    KESTREL_FILTER_BICUBIC,
    KESTREL_FILTER_LANCZOS3,
    KESTREL_FILTER_LANCZOS5,
    KESTREL_FILTER_GAUSSIAN,
    KESTREL_FILTER_MITCHELLCUBIC,
    KESTREL_FILTER_AREA
} kestrel_filter;

typedef struct kestrel_from_pixels_options {
    kestrel_pixel_format to; /* the model's format */
    int width, height;       /* resize to this (0, 0: keep the size) */
    kestrel_filter filter;   /* default bilinear */
    int antialias;           /* widen the filter when downscaling (default 0) */
    const float* mean;       /* channels(to) values, or NULL */
    const float* norm;       /* channels(to) values, or NULL */
} kestrel_from_pixels_options;
void kestrel_from_pixels_options_init(kestrel_from_pixels_options* options);

/* 8-bit pixels (`stride` bytes per row; 0: packed) of format `from` as a new
 * float (channels, height, width) tensor: converted, resized, then
 * (value - mean[c]) * norm[c] as ncnn's substract_mean_normalize. */
kestrel_status kestrel_image_from_pixels(const uint8_t* pixels, int width, int height, int stride,
                                         kestrel_pixel_format from, const kestrel_from_pixels_options* options,
                                         kestrel_tensor** tensor);
/* A YUV 4:2:0 camera frame (YUV420sp: NV21 with nv21 = 1, NV12 with 0; or
 * I420) as a new U8 (height, width, 3) tensor of RGB or BGR pixels. */
kestrel_status kestrel_image_yuv420sp_to_pixels(const uint8_t* yuv, int width, int height, int nv21,
                                                kestrel_pixel_format to, kestrel_tensor** pixels);
kestrel_status kestrel_image_i420_to_pixels(const uint8_t* yuv, int width, int height, kestrel_pixel_format to,
                                            kestrel_tensor** pixels);

/* ---- layer types in C --------------------------------------------------- */

/* A layer's params (ncnn's id=value pairs, ids 0..31), as its callbacks see
 * them. The getters return `default_value` for an absent id, or one that
 * holds another kind of value. */
typedef struct kestrel_params kestrel_params;
int kestrel_params_has(const kestrel_params* params, int id);
int kestrel_params_int(const kestrel_params* params, int id, int default_value);
float kestrel_params_float(const kestrel_params* params, int id, float default_value);
/* An array's length (0 when absent); its first `capacity` values (as floats) into `values`. */
int kestrel_params_floats(const kestrel_params* params, int id, float* values, int capacity);

typedef struct kestrel_tensor_desc {
    kestrel_dtype dtype;
    int rank;
    int64_t shape[KESTREL_MAX_RANK];
} kestrel_tensor_desc;

/* A layer type: `infer` gives the outputs' dtypes and shapes from the
 * inputs', `forward` fills the outputs (allocated as `infer` said) from the
 * inputs; both see the layer's params. Each returns 0, or nonzero after
 * writing a message into `error` (`error_size` bytes): the run then fails
 * with that message and the layer's name. `user_data` is passed back to both.
 * `forward` may run on several threads at once (sessions sharing a net). */
typedef struct kestrel_layer_callbacks {
    void* user_data;
    int (*infer)(void* user_data, const kestrel_params* params, int input_count, const kestrel_tensor_desc* inputs,
                 int output_count, kestrel_tensor_desc* outputs, char* error, size_t error_size);
    int (*forward)(void* user_data, const kestrel_params* params, int input_count, const kestrel_tensor* const* inputs,
                   int output_count, kestrel_tensor* const* outputs, char* error, size_t error_size);
} kestrel_layer_callbacks;

/* Makes layer type `type` available to nets loaded afterwards (process-wide;
 * a built-in type of the same name is replaced). */
kestrel_status kestrel_register_layer(const char* type, const kestrel_layer_callbacks* callbacks);

#ifdef __cplusplus
}
#endif

#endif /* KESTREL_C_API_H */
