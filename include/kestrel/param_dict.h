// ParamDict: the `id=value` parameters of one layer, as ncnn's .param stores them.
// Ids are 0..31; values are an int, a float, an int or float array, or a string.
// Typed getters check the stored kind, so a float written where an int is
// expected is a clear error instead of ncnn's silent bit-pattern reinterpretation.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kestrel {

class ParamDict {
public:
    static constexpr int kMaxId = 32;
    // Kind of a stored value. Raw* come from .param.bin, where the file does not
    // say whether the 4-byte words are ints or floats; getters accept either.
    enum class Kind : uint8_t { None, Int, Float, IntArray, FloatArray, RawScalar, RawArray, String };

    bool has(int id) const;
    Kind kind(int id) const;

    int get_int(int id, int default_value) const;
    float get_float(int id, float default_value) const;
    std::vector<int> get_ints(int id) const;       // empty when absent
    std::vector<float> get_floats(int id) const;   // empty when absent; int arrays are converted
    std::string get_string(int id, const std::string& default_value = "") const;

    void set_int(int id, int v);
    void set_float(int id, float v);
    void set_ints(int id, std::vector<int> v);
    void set_floats(int id, std::vector<float> v);
    void set_string(int id, std::string v);
    void set_raw_scalar(int id, uint32_t bits);
    void set_raw_array(int id, std::vector<uint32_t> words);
    void erase(int id); // the id then has no value

    // "0=64 1=3 ..." in the .param text form (round-trips through the parser).
    std::string to_text() const;
    // Ids that have a value, ascending.
    std::vector<int> ids() const;

private:
    struct Entry {
        Kind kind = Kind::None;
        std::vector<uint32_t> words; // scalars and arrays as raw 32-bit words
        std::string text;
    };
    const Entry& entry(int id) const;
    Entry& slot(int id);
    Entry entries_[kMaxId];
};

} // namespace kestrel
