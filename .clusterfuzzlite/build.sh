#!/bin/bash -eu
# Builds every fuzz target in fuzz/ and puts each in $OUT with its seed corpus (from
# corpus/fuzz/<target>/, the seeds' named cases) and, for the decoders, the dialect
# dictionary. The builder's cargo wrapper adds the sanitizer flags for $SANITIZER.
cd "$SRC/toolcert"
cargo fuzz build -O --debug-assertions

out_dir=fuzz/target/x86_64-unknown-linux-gnu/release
for src in fuzz/fuzz_targets/*.rs; do
    target=$(basename "${src%.rs}")
    cp "$out_dir/$target" "$OUT/"
    seeds=corpus/fuzz/$target
    # The template target for users runs the reference's seeds (value forms work for any subject).
    [ "$target" = accumulator ] && seeds=corpus/fuzz/reference
    if [ -d "$seeds" ]; then
        (cd "$seeds" && zip -qr "$OUT/${target}_seed_corpus.zip" .)
    fi
done
cp fuzz/dicts/dialect.dict "$OUT/dialect_decode.dict"
cp fuzz/dicts/dialect.dict "$OUT/sse_chunks.dict"
