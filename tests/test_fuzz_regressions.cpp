// Inputs the fuzzers (fuzz/, scripts/fuzz.sh) once crashed on, kept as files in
// tests/fuzz_regressions/ and replayed here through the same entry points, with
// the behaviour the fix gives. Under the ASan/UBSan build these also re-check
// that the original report is gone.
#include <fstream>
#include <iterator>

#include "kestrel/npy.h"
#include "reference_util.h"

namespace kestrel {
namespace {

std::string regression_file(const std::string& name)
{
    const std::string path = testing::source_path("tests/fuzz_regressions/" + name);
    std::ifstream f(path, std::ios::binary);
    EXPECT_TRUE(f.good()) << path;
    return std::string(std::istreambuf_iterator<char>(f), {});
}

// fuzz_npy: a '|b1' array whose bytes are not 0/1 ("<" = 60 here) was loaded
// as-is, and converting it read an invalid bool (UBSan: load of value 60).
// numpy reads any non-zero byte as True; so do we.
TEST(FuzzRegression, NpyBoolBytesOtherThanZeroOrOne)
{
    const std::string found = regression_file("npy-bool-byte-60.npy");
    const std::string header = found.substr(0, found.size() - 4);  // shape (2, 2): the data is the last 4 bytes
    // The fuzzer's data bytes, then the same header with a zero among odd values.
    for (const std::string& bytes : {found, header + std::string("\0\x02\xff\x01", 4)}) {
        const Tensor t = parse_npy(bytes.data(), bytes.size(), "npy-bool-byte-60.npy");
        ASSERT_EQ(t.dtype(), DType::Bool);
        ASSERT_EQ(t.shape(), (Shape{2, 2}));
        const Tensor f = t.to(DType::F32);
        for (int i = 0; i < 4; ++i) {
            const int expected = bytes[header.size() + i] != 0;
            EXPECT_EQ(t.data<uint8_t>()[i], expected) << i;
            EXPECT_EQ(f.data<float>()[i], static_cast<float>(expected)) << i;
        }
    }
}

} // namespace
} // namespace kestrel
