// Umbrella header for the Kestrel inference engine.
#pragma once
#include "kestrel/error.h"
#include "kestrel/model_file.h"
#include "kestrel/net.h"
#include "kestrel/npy.h"
#include "kestrel/op.h"
#include "kestrel/options.h"
#include "kestrel/param_dict.h"
#include "kestrel/quantize.h"
#include "kestrel/tensor.h"
