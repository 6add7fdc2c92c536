#include "graph/graph.h"

#include "kestrel/error.h"

namespace kestrel {

int Graph::find_blob(const std::string& name) const
{
    auto it = blob_index.find(name);
    return it == blob_index.end() ? -1 : it->second;
}

std::string Graph::where(int layer) const
{
    const Layer& l = layers.at(layer);
    std::string s = source;
    if (l.line > 0) s += ":" + std::to_string(l.line);
    return s + ": " + l.type + " '" + l.name + "'";
}

void Graph::finalize()
{
    for (Blob& b : blobs) {
        b.producer = -1;
        b.consumers.clear();
    }
    inputs.clear();
    outputs.clear();
    for (int li = 0; li < static_cast<int>(layers.size()); ++li) {
        const Layer& l = layers[li];
        for (int b : l.bottoms) {
            check(b >= 0 && b < static_cast<int>(blobs.size()), where(li), ": bad bottom blob index ", b);
            // Layers are in topological order: a bottom must already be produced.
            check(blobs[b].producer >= 0, where(li), ": bottom blob '", blobs[b].name,
                  "' is not produced by any earlier layer");
            blobs[b].consumers.push_back(li);
        }
        for (int t : l.tops) {
            check(t >= 0 && t < static_cast<int>(blobs.size()), where(li), ": bad top blob index ", t);
            // (not check(): its message arguments are evaluated even when the check passes)
            if (blobs[t].producer >= 0)
                fail(where(li), ": blob '", blobs[t].name, "' is already produced by ", layers[blobs[t].producer].type,
                     " '", layers[blobs[t].producer].name, "'");
            blobs[t].producer = li;
        }
        if (l.type == "Input")
            for (int t : l.tops) inputs.push_back(t);
    }
    if (!declared_outputs.empty()) {
        for (const std::string& name : declared_outputs) {
            const int b = find_blob(name);
            check(b >= 0 && blobs[b].producer >= 0, source, ": declared output '", name, "' is not produced");
            outputs.push_back(b);
        }
        return;
    }
    for (int bi = 0; bi < static_cast<int>(blobs.size()); ++bi)
        if (blobs[bi].producer >= 0 && blobs[bi].consumers.empty()) outputs.push_back(bi);
}

} // namespace kestrel
