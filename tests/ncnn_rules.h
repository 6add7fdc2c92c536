// A .param text checked by ncnn's own rules (docs/ncnn-compat-spec.md 1.1,
// 1.6), written from the spec rather than from our reader: the magic and the
// counts, every layer a type ncnn has with only the param ids ncnn's layers
// read (0..19 and the featmask 31, arrays as -23300-id), our featmask bits
// absent, every bottom produced before it is read and read once (ncnn's blobs
// have one consumer), and Input's shape hints as 0=w 1=h 11=d 2=c.
#pragma once
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>

namespace ktest {

inline ::testing::AssertionResult follows_ncnn_param_rules(const std::string& param_text)
{
    static const std::set<std::string> ncnn_types = {
        "Input",   "Convolution", "ConvolutionDepthWise", "InnerProduct", "Pooling", "ReLU",   "Clip",
        "BinaryOp", "Split",      "Flatten",              "Concat",       "Softmax", "Sigmoid", "Dropout"};
    std::istringstream in(param_text);
    std::string line;
    std::getline(in, line);
    if (line != "7767517") return ::testing::AssertionFailure() << "magic line '" << line << "'";
    int layer_count = 0, blob_count = 0;
    std::getline(in, line);
    std::istringstream(line) >> layer_count >> blob_count;
    std::set<std::string> produced, read;
    for (int k = 0; k < layer_count; ++k) {
        if (!std::getline(in, line)) return ::testing::AssertionFailure() << "only " << k << " layers";
        std::istringstream f(line);
        std::string type, name;
        int nb = 0, nt = 0;
        f >> type >> name >> nb >> nt;
        const std::string where = "layer " + std::to_string(k) + " " + type + " '" + name + "': ";
        if (!ncnn_types.count(type)) return ::testing::AssertionFailure() << where << "not an ncnn layer here";
        for (int b = 0; b < nb; ++b) {
            std::string blob;
            f >> blob;
            if (!produced.count(blob)) return ::testing::AssertionFailure() << where << "reads '" << blob << "' first";
            if (!read.insert(blob).second)
                return ::testing::AssertionFailure() << where << "reads '" << blob << "', which another layer reads";
        }
        for (int t = 0; t < nt; ++t) {
            std::string blob;
            f >> blob;
            produced.insert(blob);
        }
        std::map<int, std::string> params;
        for (std::string tok; f >> tok;) {
            const size_t eq = tok.find('=');
            int id = std::stoi(tok.substr(0, eq));
            if (id <= -23300) id = -id - 23300;
            if (!(id >= 0 && id < 20) && id != 31)
                return ::testing::AssertionFailure() << where << "param " << tok << " is not ncnn's";
            params[id] = tok.substr(eq + 1);
        }
        if (params.count(31) && std::stoi(params[31]) >= 65536)
            return ::testing::AssertionFailure() << where << "our featmask bits";
        for (const auto& kv : params)
            if (type == "Input" && kv.first != 0 && kv.first != 1 && kv.first != 11 && kv.first != 2)
                return ::testing::AssertionFailure() << where << "param " << kv.first << " is not w, h, d or c";
    }
    if (static_cast<int>(produced.size()) != blob_count)
        return ::testing::AssertionFailure() << blob_count << " blobs declared, " << produced.size() << " written";
    return ::testing::AssertionSuccess();
}

} // namespace ktest
