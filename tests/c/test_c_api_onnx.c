/* The C API's ONNX loader from C99: a shared model (argv[1]: its folder with
 * model.onnx, input.npy and PyTorch's output.npy) run and compared with
 * PyTorch's output. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kestrel/c_api.h"

/* A float32 .npy file's values and shape (little-endian, C order). */
static float* read_npy(const char* path, int64_t* shape, int* rank, int64_t* count)
{
    FILE* f = fopen(path, "rb");
    unsigned char head[10];
    char* header;
    const char* p;
    float* values = NULL;
    unsigned header_len;
    *rank = 0, *count = 1;
    if (!f) return NULL;
    if (fread(head, 1, 10, f) != 10 || memcmp(head, "\x93NUMPY", 6) != 0 || head[6] != 1) goto done;
    header_len = head[8] | (head[9] << 8);
    header = (char*)calloc(header_len + 1, 1);
    if (!header || fread(header, 1, header_len, f) != header_len || !strstr(header, "'<f4'") ||
        !strstr(header, "'fortran_order': False")) {
        free(header);
        goto done;
    }
    for (p = strchr(strstr(header, "'shape'"), '(') + 1; *p && *p != ')';) {
        char* end;
        const long long d = strtoll(p, &end, 10);
        if (end == p) {
            ++p;
            continue;
        }
        shape[(*rank)++] = d, *count *= d, p = end;
    }
    free(header);
    values = (float*)malloc(sizeof(float) * (size_t)*count);
    if (values && fread(values, sizeof(float), (size_t)*count, f) != (size_t)*count) {
        free(values);
        values = NULL;
    }
done:
    fclose(f);
    return values;
}

int main(int argc, char** argv)
{
    char path[1024];
    int64_t in_shape[8], out_shape[8], in_count, out_count, i;
    int in_rank, out_rank, failures = 0;
    float *x, *want;
    double scale = 0, worst = 0;
    kestrel_net* net = NULL;
    kestrel_session* session = NULL;
    kestrel_tensor* y = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: %s MODEL_DIR\n", argv[0]);
        return 2;
    }
    snprintf(path, sizeof path, "%s/input.npy", argv[1]);
    x = read_npy(path, in_shape, &in_rank, &in_count);
    snprintf(path, sizeof path, "%s/output.npy", argv[1]);
    want = read_npy(path, out_shape, &out_rank, &out_count);
    if (!x || !want) {
        fprintf(stderr, "cannot read %s's .npy files\n", argv[1]);
        return 1;
    }
    snprintf(path, sizeof path, "%s/model.onnx", argv[1]);
    if (kestrel_net_create(&net) != KESTREL_OK || kestrel_net_load_onnx(net, path) != KESTREL_OK ||
        kestrel_session_create(net, NULL, &session) != KESTREL_OK ||
        kestrel_session_set_input(session, kestrel_net_input_name(net, 0), KESTREL_FLOAT32, in_shape, in_rank, x) !=
            KESTREL_OK ||
        kestrel_session_get(session, kestrel_net_output_name(net, 0), &y) != KESTREL_OK) {
        fprintf(stderr, "%s\n", kestrel_last_error());
        return 1;
    }
    if (kestrel_tensor_count(y) != out_count) {
        fprintf(stderr, "%lld outputs, expected %lld\n", (long long)kestrel_tensor_count(y), (long long)out_count);
        ++failures;
    } else {
        const float* got = (const float*)kestrel_tensor_data(y);
        for (i = 0; i < out_count; ++i) {
            scale = fmax(scale, fabs(want[i]));
            worst = fmax(worst, fabs(got[i] - want[i]));
        }
        /* PyTorch's sums in another order: within 1e-4 of the outputs' scale. */
        if (!(worst <= 1e-4 * scale)) {
            fprintf(stderr, "largest difference %g against an output scale of %g\n", worst, scale);
            ++failures;
        }
    }
    /* The one entry point, the format told from the content: the same numbers. */
    {
        kestrel_net* any = NULL;
        kestrel_session* s = NULL;
        kestrel_tensor* y2 = NULL;
        if (kestrel_net_create(&any) != KESTREL_OK || kestrel_net_load(any, path, NULL) == KESTREL_OK ||
            strstr(kestrel_last_error(), "ONNX") == NULL) {
            fprintf(stderr, "kestrel_net_load read ONNX before kestrel_register_onnx: \"%s\"\n", kestrel_last_error());
            ++failures;
        }
        if (kestrel_register_onnx() != KESTREL_OK || kestrel_net_load(any, path, NULL) != KESTREL_OK ||
            kestrel_session_create(any, NULL, &s) != KESTREL_OK ||
            kestrel_session_set_input(s, kestrel_net_input_name(any, 0), KESTREL_FLOAT32, in_shape, in_rank, x) !=
                KESTREL_OK ||
            kestrel_session_get(s, kestrel_net_output_name(any, 0), &y2) != KESTREL_OK) {
            fprintf(stderr, "kestrel_net_load: %s\n", kestrel_last_error());
            ++failures;
        } else if (kestrel_tensor_count(y2) != kestrel_tensor_count(y) ||
                   memcmp(kestrel_tensor_data(y2), kestrel_tensor_data(y),
                          sizeof(float) * (size_t)kestrel_tensor_count(y)) != 0) {
            fprintf(stderr, "kestrel_net_load and kestrel_net_load_onnx differ\n");
            ++failures;
        }
        kestrel_tensor_destroy(y2);
        kestrel_session_destroy(s);
        kestrel_net_destroy(any);
    }
    if (kestrel_net_load_onnx(net, "/nonexistent/model.onnx") == KESTREL_OK ||
        strstr(kestrel_last_error(), "/nonexistent/model.onnx") == NULL) {
        fprintf(stderr, "a missing file: \"%s\"\n", kestrel_last_error());
        ++failures;
    }
    kestrel_tensor_destroy(y);
    kestrel_session_destroy(session);
    kestrel_net_destroy(net);
    free(x);
    free(want);
    if (!failures) printf("C API, ONNX: matches PyTorch (largest difference %g of %g)\n", worst, scale);
    return failures ? 1 : 0;
}
