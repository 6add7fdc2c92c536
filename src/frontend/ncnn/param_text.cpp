// The .param text form: magic, counts, then one layer per record with its
// `id=value` params. Whitespace (newlines included) separates tokens, exactly
// as ncnn's scanf-based reader does; we also track lines for messages.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "frontend/ncnn/legacy_layers.h"
#include "frontend/ncnn/param.h"
#include "kestrel/error.h"

namespace kestrel {

namespace {

constexpr int kMagic = 7767517;
constexpr int kMaxLayers = 1 << 20;
constexpr int kMaxBlobsPerLayer = 1 << 12;
constexpr size_t kMaxNameLength = 255;      // as written in the file (ncnn's limit)
constexpr size_t kMaxEscapedNameLength = 4096; // a name with escapes (an ONNX name, say)
constexpr const char* kOutputRecord = "Output"; // after the declared layers: the graph outputs

struct Token {
    std::string text;
    int line = 0;
};

class Tokenizer {
public:
    Tokenizer(const std::string& text, const std::string& source) : text_(text), source_(source) {}

    bool at_end()
    {
        skip_space();
        return pos_ >= text_.size();
    }

    Token next(const char* what)
    {
        skip_space();
        if (pos_ >= text_.size()) fail(source_, ":", line_, ": unexpected end of file, expected ", what);
        Token t{std::string(), line_};
        const size_t start = pos_;
        while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
        // A quoted string value may contain spaces: `6="-1, *(0h,2)"`.
        // Look only inside this token: searching the rest of the file for
        // every token made loading quadratic in the file size.
        const std::string_view token(text_.data() + start, pos_ - start);
        const size_t eq_in_token = token.find("=\"");
        const size_t eq = eq_in_token == std::string_view::npos ? std::string::npos : start + eq_in_token;
        if (eq != std::string::npos && token.find('"', eq_in_token + 2) == std::string_view::npos) {
            const size_t close = text_.find_first_of("\"\n", pos_);
            if (close == std::string::npos || text_[close] != '"')
                fail(source_, ":", line_, ": unterminated string in '", text_.substr(start, pos_ - start), "'");
            pos_ = close + 1;
        }
        t.text = text_.substr(start, pos_ - start);
        return t;
    }

    // True when the next token looks like a param key `<int>=`.
    bool next_is_param()
    {
        skip_space();
        size_t p = pos_;
        if (p < text_.size() && text_[p] == '-') ++p;
        const size_t digits = p;
        while (p < text_.size() && std::isdigit(static_cast<unsigned char>(text_[p]))) ++p;
        return p > digits && p < text_.size() && text_[p] == '=';
    }

    const std::string& source() const { return source_; }

private:
    void skip_space()
    {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
            if (text_[pos_] == '\n') ++line_;
            ++pos_;
        }
    }

    const std::string& text_;
    std::string source_;
    size_t pos_ = 0;
    int line_ = 1;
};

[[noreturn]] void bad(const Tokenizer& tz, int line, const std::string& msg)
{
    fail(tz.source(), ":", line, ": ", msg);
}

bool parse_int(const std::string& s, long long& out)
{
    if (s.empty()) return false;
    errno = 0;
    char* end = nullptr;
    out = std::strtoll(s.c_str(), &end, 10);
    return errno == 0 && end == s.c_str() + s.size() && out >= INT_MIN && out <= INT_MAX;
}

int expect_int(Tokenizer& tz, const char* what, long long lo, long long hi)
{
    const Token t = tz.next(what);
    long long v;
    if (!parse_int(t.text, v)) bad(tz, t.line, std::string("expected ") + what + ", got '" + t.text + "'");
    if (v < lo || v > hi)
        bad(tz, t.line, std::string(what) + " " + t.text + " out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    return static_cast<int>(v);
}

int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// A name as write_ncnn_param_text escaped it: %XX is byte XX; a '%' not
// followed by two hex digits is itself (ncnn's files never escape).
std::string unescape_name(const std::string& text)
{
    std::string name;
    for (size_t i = 0; i < text.size(); ++i) {
        const int hi = text[i] == '%' && i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
        const int lo = hi >= 0 ? hex_digit(text[i + 2]) : -1;
        if (lo < 0) {
            name += text[i];
            continue;
        }
        name += static_cast<char>(hi * 16 + lo);
        i += 2;
    }
    return name;
}

std::string expect_name(Tokenizer& tz, const char* what)
{
    const Token t = tz.next(what);
    const bool escaped = t.text.find('%') != std::string::npos;
    if (t.text.size() > (escaped ? kMaxEscapedNameLength : kMaxNameLength))
        bad(tz, t.line, std::string(what) + " longer than " + std::to_string(escaped ? kMaxEscapedNameLength : kMaxNameLength) +
                            " characters");
    return unescape_name(t.text);
}

bool is_float_literal(const std::string& s) { return s.find_first_of(".eE") != std::string::npos; }

bool parse_float(const std::string& s, float& out)
{
    if (s.empty()) return false;
    char* end = nullptr;
    const double d = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size()) return false;
    out = static_cast<float>(d);
    return true;
}

std::vector<std::string> split_commas(const std::string& s)
{
    std::vector<std::string> parts;
    size_t start = 0;
    for (;;) {
        const size_t comma = s.find(',', start);
        parts.push_back(s.substr(start, comma - start));
        if (comma == std::string::npos) return parts;
        start = comma + 1;
    }
}

// Stores elements as ints or floats. `first_decides` is ncnn's new-style rule
// (the first element picks the type); otherwise any float makes a float array.
void store_array(ParamDict& pd, int id, const std::vector<std::string>& items, bool first_decides,
                 const std::string& where)
{
    bool floats = false;
    if (first_decides) floats = !items.empty() && is_float_literal(items[0]);
    else
        for (const auto& it : items) floats = floats || is_float_literal(it);
    std::vector<int> ints;
    std::vector<float> fls;
    for (const auto& it : items) {
        float f;
        long long v;
        if (floats) {
            if (!parse_float(it, f)) fail(where, "bad number '", it, "' in array param ", id);
            fls.push_back(f);
        } else {
            // ncnn reads "2.5" in an int array as 2 (scanf %d stops at '.').
            if (!parse_int(it, v)) {
                if (!parse_float(it, f) || !(f > -2147483648.f && f < 2147483648.f))
                    fail(where, "bad integer '", it, "' in array param ", id);
                v = static_cast<long long>(f);
            }
            ints.push_back(static_cast<int>(v));
        }
    }
    if (floats) pd.set_floats(id, fls);
    else pd.set_ints(id, ints);
}

void parse_param(Tokenizer& tz, Layer& layer)
{
    const Token t = tz.next("param");
    const std::string where = tz.source() + ":" + std::to_string(t.line) + ": " + layer.type + " '" + layer.name + "': ";
    const size_t eq = t.text.find('=');
    long long key;
    if (!parse_int(t.text.substr(0, eq), key)) fail(where, "bad param key in '", t.text, "'");
    const std::string value = t.text.substr(eq + 1);
    if (key <= -23300) { // old-style array: -23300-id=len,a,b,...
        const long long id = -key - 23300;
        if (id >= ParamDict::kMaxId) fail(where, "param id ", id, " out of range 0..31");
        auto items = split_commas(value);
        long long len;
        if (!parse_int(items[0], len) || len < 0) fail(where, "bad array length in '", t.text, "'");
        items.erase(items.begin());
        if (static_cast<long long>(items.size()) != len)
            fail(where, "array param ", id, " declares ", len, " elements but has ", items.size());
        if (len == 0) layer.params.set_ints(static_cast<int>(id), {});
        else store_array(layer.params, static_cast<int>(id), items, false, where);
        return;
    }
    if (key < 0 || key >= ParamDict::kMaxId) fail(where, "param id ", key, " out of range 0..31");
    const int id = static_cast<int>(key);
    if (value.empty()) fail(where, "param ", id, " has no value");
    if (value[0] == '"' || std::isalpha(static_cast<unsigned char>(value[0]))) {
        std::string s = value;
        if (s[0] == '"') s = s.substr(1);
        if (!s.empty() && s.back() == '"') s.pop_back();
        if (s.size() > kMaxNameLength) fail(where, "string param ", id, " longer than 255 characters");
        layer.params.set_string(id, s);
        return;
    }
    if (value.find(',') != std::string::npos) {
        store_array(layer.params, id, split_commas(value), true, where);
        return;
    }
    if (is_float_literal(value)) {
        float f;
        if (!parse_float(value, f)) fail(where, "bad float '", value, "' for param ", id);
        layer.params.set_float(id, f);
    } else {
        long long v;
        if (!parse_int(value, v)) fail(where, "bad integer '", value, "' for param ", id);
        layer.params.set_int(id, static_cast<int>(v));
    }
}

} // namespace

Graph parse_ncnn_param_text(const std::string& text, const std::string& source)
{
    Tokenizer tz(text, source);
    Graph g;
    g.source = source;
    {
        const Token magic = tz.next("magic number 7767517");
        long long m;
        if (!parse_int(magic.text, m) || m != kMagic)
            bad(tz, magic.line, "not an ncnn .param file (magic '" + magic.text + "', expected 7767517)");
    }
    const int layer_count = expect_int(tz, "layer count", 1, kMaxLayers);
    const int blob_count = expect_int(tz, "blob count", 1, kMaxLayers * 16LL);
    g.layers.reserve(std::min(layer_count, 4096)); // the count is not trusted until the layers are read
    for (int li = 0; li < layer_count; ++li) {
        if (tz.at_end())
            fail(source, ": unexpected end of file: header declares ", layer_count, " layers, found ", li);
        Layer layer;
        const Token type = tz.next("layer type");
        layer.type = type.text;
        layer.line = type.line;
        if (layer.type.size() > kMaxNameLength) bad(tz, type.line, "layer type longer than 255 characters");
        layer.name = expect_name(tz, "layer name");
        const int nbottom = expect_int(tz, "bottom count", 0, kMaxBlobsPerLayer);
        const int ntop = expect_int(tz, "top count", 0, kMaxBlobsPerLayer);
        for (int i = 0; i < nbottom; ++i) {
            const std::string name = expect_name(tz, "bottom blob name");
            const int b = g.find_blob(name);
            if (b < 0)
                bad(tz, layer.line, layer.type + " '" + layer.name + "': bottom blob '" + name +
                                        "' is not produced by any earlier layer");
            layer.bottoms.push_back(b);
        }
        for (int i = 0; i < ntop; ++i) {
            const std::string name = expect_name(tz, "top blob name");
            if (g.find_blob(name) >= 0)
                bad(tz, layer.line, layer.type + " '" + layer.name + "': top blob '" + name + "' is produced twice");
            if (static_cast<int>(g.blobs.size()) >= blob_count)
                bad(tz, layer.line, "more blobs than the " + std::to_string(blob_count) + " declared in the header");
            g.blob_index[name] = static_cast<int>(g.blobs.size());
            g.blobs.push_back(Blob{name, li, {}});
            layer.tops.push_back(g.blob_index[name]);
        }
        while (tz.next_is_param()) parse_param(tz, layer);
        try {
            upgrade_legacy_layer(layer.type, layer.params);
        } catch (const Error& e) {
            bad(tz, layer.line, layer.type + " '" + layer.name + "': " + e.what());
        }
        g.layers.push_back(std::move(layer));
    }
    // Like ncnn, read exactly the declared number of layers and ignore further
    // well-formed layer records (ncnn's own nanodet_m.param has one); anything
    // else after them is an error. One of them is ours: `Output` with no tops
    // lists the graph outputs (written when they are not simply the blobs no
    // layer reads; ncnn skips it).
    while (!tz.at_end()) {
        const Token type = tz.next("layer type");
        if (!std::isalpha(static_cast<unsigned char>(type.text[0])))
            bad(tz, type.line, "unexpected '" + type.text + "' after the " + std::to_string(layer_count) + " declared layers");
        Layer extra;
        extra.type = type.text;
        extra.name = expect_name(tz, "layer name");
        const int nb = expect_int(tz, "bottom count", 0, kMaxBlobsPerLayer);
        const int nt = expect_int(tz, "top count", 0, kMaxBlobsPerLayer);
        std::vector<std::string> names;
        for (int i = 0; i < nb + nt; ++i) names.push_back(expect_name(tz, "blob name"));
        while (tz.next_is_param()) parse_param(tz, extra);
        if (extra.type == kOutputRecord && nt == 0 && nb > 0) {
            if (!g.declared_outputs.empty()) bad(tz, type.line, "more than one Output record");
            g.declared_outputs = names; // finalize() checks that each is produced
        }
    }
    g.finalize();
    return g;
}

namespace {

// Graph outputs that are not exactly the blobs no layer reads, in blob order
// (what a reader infers without an Output record).
bool outputs_need_a_record(const Graph& graph)
{
    std::vector<int> unread;
    for (int b = 0; b < static_cast<int>(graph.blobs.size()); ++b)
        if (graph.blobs[b].producer >= 0 && graph.blobs[b].consumers.empty()) unread.push_back(b);
    return graph.outputs != unread;
}

// A name as one token the reader gives back whole: bytes that would end it
// or read as a param or a string (space, control, '=', '"') and '%' itself
// become %XX (unescape_name).
std::string escape_name(const std::string& name)
{
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const char c : name) {
        const auto u = static_cast<unsigned char>(c);
        if (u > 0x20 && u != 0x7f && c != '%' && c != '=' && c != '"') {
            out += c;
            continue;
        }
        out += '%';
        out += hex[u >> 4];
        out += hex[u & 15];
    }
    return out;
}

} // namespace

std::string write_ncnn_param_text(const Graph& graph)
{
    std::string out = "7767517\n" + std::to_string(graph.layers.size()) + " " + std::to_string(graph.blobs.size()) + "\n";
    for (const Layer& l : graph.layers) {
        out += l.type + " " + escape_name(l.name) + " " + std::to_string(l.bottoms.size()) + " " +
               std::to_string(l.tops.size());
        for (int b : l.bottoms) out += " " + escape_name(graph.blobs[b].name);
        for (int t : l.tops) out += " " + escape_name(graph.blobs[t].name);
        const std::string params = l.params.to_text();
        if (!params.empty()) out += " " + params;
        out += "\n";
    }
    if (outputs_need_a_record(graph)) {
        out += std::string(kOutputRecord) + " outputs " + std::to_string(graph.outputs.size()) + " 0";
        for (int b : graph.outputs) out += " " + escape_name(graph.blobs[b].name);
        out += "\n";
    }
    return out;
}

} // namespace kestrel
