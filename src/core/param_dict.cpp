#include "kestrel/param_dict.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "kestrel/error.h"

namespace kestrel {

namespace {
uint32_t float_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}
float bits_float(uint32_t u)
{
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
std::string format_float(float f)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9e", static_cast<double>(f));
    return buf;
}
} // namespace

const ParamDict::Entry& ParamDict::entry(int id) const
{
    static const Entry none;
    if (id < 0 || id >= kMaxId) return none;
    return entries_[id];
}

ParamDict::Entry& ParamDict::slot(int id)
{
    check(id >= 0 && id < kMaxId, "param id ", id, " out of range 0..", kMaxId - 1);
    return entries_[id];
}

bool ParamDict::has(int id) const { return entry(id).kind != Kind::None; }
ParamDict::Kind ParamDict::kind(int id) const { return entry(id).kind; }

int ParamDict::get_int(int id, int default_value) const
{
    const Entry& e = entry(id);
    switch (e.kind) {
    case Kind::None: return default_value;
    case Kind::Int:
    case Kind::RawScalar: return static_cast<int>(e.words[0]);
    case Kind::Float: {
        // Accept integral floats ("0=1.0"); ncnn would read the bit pattern instead.
        const float f = bits_float(e.words[0]);
        if (std::nearbyint(f) == f && std::fabs(f) < 2147483648.f) return static_cast<int>(f);
        fail("param ", id, " must be an integer, got ", f);
    }
    default: fail("param ", id, " must be a scalar, got an array or string");
    }
}

float ParamDict::get_float(int id, float default_value) const
{
    const Entry& e = entry(id);
    switch (e.kind) {
    case Kind::None: return default_value;
    case Kind::Int: return static_cast<float>(static_cast<int>(e.words[0]));
    case Kind::Float:
    case Kind::RawScalar: return bits_float(e.words[0]);
    default: fail("param ", id, " must be a scalar, got an array or string");
    }
}

std::vector<int> ParamDict::get_ints(int id) const
{
    const Entry& e = entry(id);
    if (e.kind == Kind::None) return {};
    check(e.kind == Kind::IntArray || e.kind == Kind::RawArray || e.kind == Kind::Int || e.kind == Kind::RawScalar,
          "param ", id, " must be an int array");
    std::vector<int> v;
    for (uint32_t w : e.words) v.push_back(static_cast<int>(w));
    return v;
}

std::vector<float> ParamDict::get_floats(int id) const
{
    const Entry& e = entry(id);
    std::vector<float> v;
    switch (e.kind) {
    case Kind::None: break;
    case Kind::IntArray:
    case Kind::Int:
        for (uint32_t w : e.words) v.push_back(static_cast<float>(static_cast<int>(w)));
        break;
    case Kind::FloatArray:
    case Kind::Float:
    case Kind::RawArray:
    case Kind::RawScalar:
        for (uint32_t w : e.words) v.push_back(bits_float(w));
        break;
    default: fail("param ", id, " must be a float array");
    }
    return v;
}

std::string ParamDict::get_string(int id, const std::string& default_value) const
{
    const Entry& e = entry(id);
    if (e.kind == Kind::None) return default_value;
    check(e.kind == Kind::String, "param ", id, " must be a string");
    return e.text;
}

void ParamDict::set_int(int id, int v) { slot(id) = Entry{Kind::Int, {static_cast<uint32_t>(v)}, {}}; }
void ParamDict::set_float(int id, float v) { slot(id) = Entry{Kind::Float, {float_bits(v)}, {}}; }
void ParamDict::set_ints(int id, std::vector<int> v)
{
    Entry e{Kind::IntArray, {}, {}};
    for (int x : v) e.words.push_back(static_cast<uint32_t>(x));
    slot(id) = e;
}
void ParamDict::set_floats(int id, std::vector<float> v)
{
    Entry e{Kind::FloatArray, {}, {}};
    for (float x : v) e.words.push_back(float_bits(x));
    slot(id) = e;
}
void ParamDict::set_string(int id, std::string v) { slot(id) = Entry{Kind::String, {}, std::move(v)}; }
void ParamDict::set_raw_scalar(int id, uint32_t bits) { slot(id) = Entry{Kind::RawScalar, {bits}, {}}; }
void ParamDict::set_raw_array(int id, std::vector<uint32_t> words) { slot(id) = Entry{Kind::RawArray, std::move(words), {}}; }

void ParamDict::erase(int id) { slot(id) = Entry{}; }

std::vector<int> ParamDict::ids() const
{
    std::vector<int> v;
    for (int i = 0; i < kMaxId; ++i)
        if (entries_[i].kind != Kind::None) v.push_back(i);
    return v;
}

std::string ParamDict::to_text() const
{
    std::ostringstream os;
    bool first = true;
    for (int id : ids()) {
        const Entry& e = entries_[id];
        if (!first) os << ' ';
        first = false;
        switch (e.kind) {
        case Kind::Int: os << id << '=' << static_cast<int>(e.words[0]); break;
        case Kind::Float: os << id << '=' << format_float(bits_float(e.words[0])); break;
        // Raw words from .param.bin: ints are the common case; write them as ints.
        case Kind::RawScalar: os << id << '=' << static_cast<int>(e.words[0]); break;
        case Kind::String: os << id << "=\"" << e.text << '"'; break;
        default: {
            // Old-style array form: every element tagged by its own syntax.
            os << -23300 - id << '=' << e.words.size();
            for (uint32_t w : e.words) {
                if (e.kind == Kind::FloatArray) os << ',' << format_float(bits_float(w));
                else os << ',' << static_cast<int>(w);
            }
        }
        }
    }
    return os.str();
}

} // namespace kestrel
