// Runs ONNX's node conformance cases (Debian's libonnx-testdata):
//   model.onnx + test_data_set_*/input_*.pb -> compare with output_*.pb
// (rtol 1e-3, atol 1e-5 for floats; exact for integers and booleans).
// Each case runs in a child process, so a crash or hang fails that case only.
//
// usage: kestrel_onnx_conformance [--data DIR] [--filter SUBSTR] [--expected FILE]
//                                 [--write-expected FILE] [--report FILE] [--quiet]
// With --expected, exits 1 if any case listed there does not pass.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "core/dtype_dispatch.h"
#include "kestrel/kestrel.h"
#include "kestrel/onnx.h"
#include "frontend/onnx/onnx_tensor.h"

namespace {

using namespace kestrel;

std::vector<std::string> list_dir(const std::string& dir, const std::string& prefix)
{
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.compare(0, prefix.size(), prefix) == 0 && n != "." && n != "..") names.push_back(n);
        }
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    return names;
}

// Empty string when equal within tolerance, else the first difference.
std::string compare(const Tensor& got, const Tensor& want)
{
    if (got.dtype() != want.dtype())
        return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
    if (got.shape() != want.shape()) return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
    if (want.dtype() == DType::String) {
        for (int64_t i = 0; i < want.numel(); ++i)
            if (got.data<std::string>()[i] != want.data<std::string>()[i])
                return "value[" + std::to_string(i) + "] = '" + got.data<std::string>()[i] + "', expected '" +
                       want.data<std::string>()[i] + "'";
        return "";
    }
    const bool exact = !dtype_is_float(want.dtype());
    const Tensor g = got.to(DType::F64), w = want.to(DType::F64);
    for (int64_t i = 0; i < w.numel(); ++i) {
        const double a = g.data<double>()[i], b = w.data<double>()[i];
        if (std::isnan(a) && std::isnan(b)) continue;
        const bool ok = exact ? a == b : (a == b || std::fabs(a - b) <= 1e-5 + 1e-3 * std::fabs(b));
        if (!ok) {
            std::ostringstream os;
            os << "value[" << i << "] = " << a << ", expected " << b;
            return os.str();
        }
    }
    return "";
}

// Sequences and optionals: their values in turn (a sequence's in an optional too).
std::string compare_values(const Tensor& got, const Tensor& want)
{
    if (got.dtype() != want.dtype() || got.numel() != want.numel())
        return std::string("a ") + dtype_name(got.dtype()) + " of " + std::to_string(got.numel()) + ", expected a " +
               dtype_name(want.dtype()) + " of " + std::to_string(want.numel());
    const std::vector<Tensor> g = got.items(), w = want.items();
    for (size_t k = 0; k < g.size(); ++k) {
        const std::string diff = dtype_holds_tensors(g[k].dtype()) ? compare_values(g[k], w[k]) : compare(g[k], w[k]);
        if (!diff.empty()) return "element " + std::to_string(k) + ": " + diff;
    }
    return "";
}

// ONNX's test generator writes bfloat16 data as uint16 (numpy has no
// bfloat16): where the other side is bfloat16, read those bits as bfloat16.
Tensor as_bf16_if_stored_as_u16(const Tensor& t, DType wanted)
{
    return wanted == DType::BF16 && t.dtype() == DType::U16 ? t.view_as(t.shape(), DType::BF16) : t;
}

// Runs one case in this process; returns "" on pass, else the reason.
std::string run_case(const std::string& dir)
{
    try {
        Net net;
        load_onnx(net, dir + "/model.onnx");
        const std::vector<std::string> inputs = net.input_names(), outputs = net.output_names();
        const std::vector<std::string> sets = list_dir(dir, "test_data_set_");
        if (sets.empty()) return "no test data";
        for (const std::string& set : sets) {
            const std::string sd = dir + "/" + set;
            Session session(net);
            const std::vector<std::string> in_files = list_dir(sd, "input_");
            for (size_t i = 0; i < in_files.size() && i < inputs.size(); ++i) {
                const std::string file = sd + "/input_" + std::to_string(i) + ".pb";
                const DType dtype = net.input_dtype(inputs[i]);
                session.set_input(inputs[i], dtype == DType::Sequence   ? read_onnx_sequence_file(file)
                                             : dtype == DType::Optional ? read_onnx_optional_file(file)
                                                                        : as_bf16_if_stored_as_u16(read_onnx_tensor_file(file), dtype));
            }
            const std::vector<std::string> out_files = list_dir(sd, "output_");
            if (out_files.size() != outputs.size())
                return "model has " + std::to_string(outputs.size()) + " outputs, test data " +
                       std::to_string(out_files.size());
            const std::vector<Tensor> got = session.run(outputs);
            for (size_t i = 0; i < outputs.size(); ++i) {
                const std::string file = sd + "/output_" + std::to_string(i) + ".pb";
                const std::string diff = got[i].is_sequence()   ? compare_values(got[i], read_onnx_sequence_file(file))
                                         : got[i].is_optional() ? compare_values(got[i], read_onnx_optional_file(file))
                                                                : compare(got[i], as_bf16_if_stored_as_u16(
                                                                                      read_onnx_tensor_file(file), got[i].dtype()));
                if (!diff.empty()) return set + " output " + std::to_string(i) + ": " + diff;
            }
        }
        return "";
    } catch (const std::exception& e) {
        std::string msg = e.what();
        // Drop the long model path from messages to keep the report readable.
        if (const size_t p = msg.find("model.onnx: "); p != std::string::npos) msg = msg.substr(p + 12);
        return msg.empty() ? "error" : msg;
    }
}

// Forks, runs the case with a time limit, and collects the verdict through a pipe.
std::string run_isolated(const std::string& dir, unsigned timeout_s)
{
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    const pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        alarm(timeout_s);
        const std::string r = run_case(dir);
        const std::string msg = r.empty() ? "PASS" : r;
        ssize_t ignored = write(fds[1], msg.data(), msg.size());
        (void)ignored;
        _exit(0);
    }
    close(fds[1]);
    std::string msg;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGALRM ? "timeout" : "crashed with signal " + std::to_string(WTERMSIG(status));
    if (msg == "PASS") return "";
    for (char& c : msg)
        if (c == '\n') c = ' ';
    return msg.empty() ? "no verdict" : msg;
}

std::set<std::string> read_list(const std::string& path)
{
    std::set<std::string> s;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line))
        if (!line.empty() && line[0] != '#') s.insert(line.substr(0, line.find_first_of(" \t")));
    return s;
}

} // namespace

int main(int argc, char** argv)
{
    std::string data = "/usr/share/libonnx-testdata/data/node", filter, expected_path, write_expected, report;
    bool quiet = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&] {
            if (i + 1 >= argc) {
                std::cerr << a << " needs a value\n";
                std::exit(2);
            }
            return std::string(argv[++i]);
        };
        if (a == "--data") data = value();
        else if (a == "--filter") filter = value();
        else if (a == "--expected") expected_path = value();
        else if (a == "--write-expected") write_expected = value();
        else if (a == "--report") report = value();
        else if (a == "--quiet") quiet = true;
        else {
            std::cerr << "unknown argument " << a << "\n";
            return 2;
        }
    }
    const std::vector<std::string> cases = list_dir(data, "test_");
    if (cases.empty()) {
        std::cerr << "no conformance cases under " << data << " (apt-get install libonnx-testdata)\n";
        return 1;
    }
    const std::set<std::string> expected = expected_path.empty() ? std::set<std::string>() : read_list(expected_path);
    std::map<std::string, std::string> failures;
    std::vector<std::string> passed;
    int regressions = 0;
    for (const std::string& c : cases) {
        if (!filter.empty() && c.find(filter) == std::string::npos) continue;
        const std::string verdict = run_isolated(data + "/" + c, 20);
        if (verdict.empty()) passed.push_back(c);
        else failures[c] = verdict;
        const bool regression = !verdict.empty() && expected.count(c);
        regressions += regression;
        if (!quiet || regression)
            std::cout << (verdict.empty() ? "PASS " : regression ? "REGRESSION " : "FAIL ") << c
                      << (verdict.empty() ? "" : ": " + verdict) << "\n";
    }
    const size_t total = passed.size() + failures.size();
    if (!write_expected.empty()) {
        std::ofstream out(write_expected);
        out << "# ONNX node conformance cases that pass (kestrel_onnx_conformance --write-expected)\n";
        for (const auto& c : passed) out << c << "\n";
    }
    if (!report.empty()) {
        std::ofstream out(report);
        out << "# ONNX conformance: failing cases\n\n" << passed.size() << " of " << total
            << " node cases pass. The cases below fail, with the reason the runner reports.\n\n";
        for (const auto& kv : failures) out << "- `" << kv.first << "`: " << kv.second << "\n";
    }
    std::cout << passed.size() << " passed, " << failures.size() << " failed\n";
    if (regressions) std::cout << regressions << " case(s) from the expected-pass list failed\n";
    return regressions ? 1 : 0;
}
