// Shared helpers for tests/test_ncnn_formats.cpp and tests/test_bad_inputs.cpp:
// scratch directories, file I/O, running the `kestrel` CLI with captured
// stdout/stderr/exit status, running an API call in a child process (so a crash
// is reported as a failure of one test instead of killing the whole binary),
// message checks, and an independent IEEE half <-> float conversion.
#pragma once
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kestrel/kestrel.h"

namespace ktest {

inline std::string shared_path(const std::string& rel) { return std::string(KESTREL_SHARED_DIR) + "/" + rel; }
inline std::string tool_path() { return KESTREL_TOOL_PATH; }

// A fresh directory under $TMPDIR (or /tmp), removed with its contents at destruction.
class TempDir {
public:
    TempDir()
    {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/kestrel_test_XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (::mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + tmpl);
        path_ = buf.data();
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

inline void write_file(const std::string& path, const void* data, size_t size)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!out) throw std::runtime_error("write failed: " + path);
}
inline void write_file(const std::string& path, const std::string& bytes) { write_file(path, bytes.data(), bytes.size()); }
inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes)
{
    write_file(path, bytes.data(), bytes.size());
}

inline std::string read_file(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::vector<uint8_t> read_bytes(const std::string& path)
{
    const std::string s = read_file(path);
    return std::vector<uint8_t>(s.begin(), s.end());
}

// ---------------------------------------------------------------------------
// Little-endian byte building (for .bin, .param.bin and .npy files).

struct Bytes {
    std::vector<uint8_t> b;
    Bytes& u8(uint8_t v)
    {
        b.push_back(v);
        return *this;
    }
    Bytes& u16(uint16_t v)
    {
        b.push_back(static_cast<uint8_t>(v & 0xff));
        b.push_back(static_cast<uint8_t>(v >> 8));
        return *this;
    }
    Bytes& u32(uint32_t v)
    {
        for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>((v >> (8 * i)) & 0xff));
        return *this;
    }
    Bytes& i32(int32_t v) { return u32(static_cast<uint32_t>(v)); }
    Bytes& f32(float f)
    {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        return u32(u);
    }
    Bytes& str(const std::string& s)
    {
        b.insert(b.end(), s.begin(), s.end());
        return *this;
    }
    Bytes& pad4()
    {
        while (b.size() % 4) b.push_back(0);
        return *this;
    }
    Bytes& append(const Bytes& o)
    {
        b.insert(b.end(), o.b.begin(), o.b.end());
        return *this;
    }
    size_t size() const { return b.size(); }
};

inline uint32_t float_bits(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

// IEEE binary16 -> float, straight from the definition.
inline float half_to_float_ref(uint16_t h)
{
    const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
    double v;
    if (exponent == 0) v = std::ldexp(static_cast<double>(mantissa), -24);
    else if (exponent == 31) v = mantissa ? NAN : INFINITY;
    else v = std::ldexp(static_cast<double>(mantissa + 1024), exponent - 25);
    return static_cast<float>(sign ? -v : v);
}

// float -> IEEE binary16, round to nearest even (finite inputs; overflow gives inf).
inline uint16_t float_to_half_ref(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
    uint32_t mant = x & 0x7fffffu;
    if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
    const int32_t e = exp - 127 + 15;
    if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return static_cast<uint16_t>(sign);
        mant |= 0x800000u;
        const int shift = 14 - e;
        uint32_t m = mant >> shift;
        const uint32_t rem = mant & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (m & 1))) ++m;
        return static_cast<uint16_t>(sign | m);
    }
    uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
    const uint32_t rem = mant & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h; // a carry into the exponent is still correct
    return static_cast<uint16_t>(h);
}

// ---------------------------------------------------------------------------
// Message checks. A key may list alternatives separated by '|' ("overflow|too large").

inline bool contains_any(const std::string& text, const std::string& alternatives)
{
    size_t start = 0;
    for (;;) {
        const size_t bar = alternatives.find('|', start);
        const std::string alt = alternatives.substr(start, bar == std::string::npos ? std::string::npos : bar - start);
        if (!alt.empty() && text.find(alt) != std::string::npos) return true;
        if (bar == std::string::npos) return false;
        start = bar + 1;
    }
}

inline ::testing::AssertionResult message_has(const std::string& message, const std::vector<std::string>& keys)
{
    std::string missing;
    for (const auto& k : keys)
        if (!contains_any(message, k)) missing += (missing.empty() ? "'" : ", '") + k + "'";
    if (!missing.empty())
        return ::testing::AssertionFailure() << "message lacks " << missing << ":\n    " << message;
    if (message.find('\n') != std::string::npos)
        return ::testing::AssertionFailure() << "message is not one line:\n    " << message;
    return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// Running the CLI.

struct CliResult {
    int exit_code = -1; // -1 when killed by a signal
    int signal = 0;
    std::string out, err;
    std::string command;

    std::string describe() const
    {
        std::ostringstream os;
        os << "command: " << command << "\n";
        if (signal) os << "killed by signal " << signal << "\n";
        else os << "exit status " << exit_code << "\n";
        os << "stderr:\n" << err << "stdout:\n" << out.substr(0, 2000);
        return os.str();
    }
};

// Runs `kestrel args...` (no shell) with stdout/stderr captured and a time limit.
// Sanitizer failures in the child exit with 86 so they cannot pass for an ordinary error.
inline CliResult run_cli(const std::vector<std::string>& args, int timeout_seconds = 300)
{
    TempDir scratch;
    const std::string out_path = scratch.file("stdout"), err_path = scratch.file("stderr");
    CliResult r;
    r.command = tool_path();
    for (const auto& a : args) r.command += " '" + a + "'";
    std::vector<std::string> argv_s;
    argv_s.push_back(tool_path());
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        const int fo = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int fe = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0) ::_exit(127);
        ::dup2(fo, 1);
        ::dup2(fe, 2);
        for (const char* var : {"ASAN_OPTIONS", "UBSAN_OPTIONS"}) {
            const char* old = std::getenv(var);
            std::string v = old && *old ? std::string(old) + ":exitcode=86" : std::string("exitcode=86");
            ::setenv(var, v.c_str(), 1);
        }
        ::alarm(static_cast<unsigned>(timeout_seconds)); // survives exec: a hang becomes SIGALRM
        std::vector<char*> argv;
        for (auto& s : argv_s) argv.push_back(const_cast<char*>(s.c_str()));
        argv.push_back(nullptr);
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out = read_file(out_path);
    r.err = read_file(err_path);
    return r;
}

// Exit status `code`, no signal, and stderr is exactly one line holding every key.
inline ::testing::AssertionResult cli_fails_with(const CliResult& r, int code, const std::vector<std::string>& keys)
{
    if (r.signal || r.exit_code != code)
        return ::testing::AssertionFailure() << "expected exit status " << code << "\n" << r.describe();
    if (r.err.empty() || r.err.back() != '\n' || r.err.find('\n') != r.err.size() - 1)
        return ::testing::AssertionFailure() << "stderr is not exactly one line\n" << r.describe();
    std::string missing;
    for (const auto& k : keys)
        if (!contains_any(r.err, k)) missing += (missing.empty() ? "'" : ", '") + k + "'";
    if (!missing.empty()) return ::testing::AssertionFailure() << "stderr lacks " << missing << "\n" << r.describe();
    return ::testing::AssertionSuccess();
}

// Usage errors: exit 2, the first stderr line holds every key (the usage text follows).
inline ::testing::AssertionResult cli_usage_error(const CliResult& r, const std::vector<std::string>& keys)
{
    if (r.signal || r.exit_code != 2)
        return ::testing::AssertionFailure() << "expected exit status 2\n" << r.describe();
    const std::string first = r.err.substr(0, r.err.find('\n'));
    for (const auto& k : keys)
        if (!contains_any(first, k))
            return ::testing::AssertionFailure() << "first stderr line lacks '" << k << "'\n" << r.describe();
    return ::testing::AssertionSuccess();
}

// ---------------------------------------------------------------------------
// Running an API call in a child process.

struct ApiOutcome {
    enum Kind { NoThrow, KestrelError, OtherException, Crashed } kind = Crashed;
    std::string message; // what() of the exception
    bool too_large = false; // the Error was a TooLargeError
    int status = 0;         // raw wait status when Crashed

    std::string describe() const
    {
        switch (kind) {
        case NoThrow: return "no exception was thrown";
        case KestrelError: return std::string(too_large ? "kestrel::TooLargeError: " : "kestrel::Error: ") + message;
        case OtherException: return "an exception that is not kestrel::Error: " + message;
        case Crashed: break;
        }
        std::ostringstream os;
        if (WIFSIGNALED(status)) os << "crashed: killed by signal " << WTERMSIG(status);
        else if (WIFEXITED(status)) os << "crashed: exit status " << WEXITSTATUS(status) << " (sanitizer report above?)";
        else os << "crashed: wait status " << status;
        return os.str();
    }
};

// The child must not use the thread pool (sessions with threads=1 do not).
inline ApiOutcome run_api_isolated(const std::function<void()>& fn, int timeout_seconds = 300)
{
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::close(fds[0]);
        ::alarm(static_cast<unsigned>(timeout_seconds));
        std::string record;
        try {
            fn();
            record = "N";
        } catch (const kestrel::TooLargeError& e) {
            record = std::string("T") + e.what();
        } catch (const kestrel::Error& e) {
            record = std::string("E") + e.what();
        } catch (const std::exception& e) {
            record = std::string("X") + e.what();
        } catch (...) {
            record = "Xunknown exception type";
        }
        size_t done = 0;
        while (done < record.size()) {
            const ssize_t k = ::write(fds[1], record.data() + done, record.size() - done);
            if (k <= 0) break;
            done += static_cast<size_t>(k);
        }
        ::close(fds[1]);
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string record;
    char buf[4096];
    for (;;) {
        const ssize_t k = ::read(fds[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        record.append(buf, static_cast<size_t>(k));
    }
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ApiOutcome r;
    r.status = status;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || record.empty()) {
        r.kind = ApiOutcome::Crashed;
        return r;
    }
    r.message = record.substr(1);
    switch (record[0]) {
    case 'N': r.kind = ApiOutcome::NoThrow; break;
    case 'T': r.kind = ApiOutcome::KestrelError; r.too_large = true; break;
    case 'E': r.kind = ApiOutcome::KestrelError; break;
    default: r.kind = ApiOutcome::OtherException; break;
    }
    return r;
}

// The call throws kestrel::Error (in a child process) whose one-line message holds every key.
inline ::testing::AssertionResult api_fails_with(const std::function<void()>& fn, const std::vector<std::string>& keys)
{
    const ApiOutcome r = run_api_isolated(fn);
    if (r.kind != ApiOutcome::KestrelError)
        return ::testing::AssertionFailure() << "expected kestrel::Error, got " << r.describe();
    return message_has(r.message, keys);
}

} // namespace ktest
