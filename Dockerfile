# floe's container image: the static floe binary (CGO_ENABLED=0) on
# distroless static, run as the nonroot user (uid 65532). No shell, no
# package manager, no libc: floe needs none.
#
# Build it with `make image` (IMAGE=floe:dev, IMAGE_ARCH=amd64|arm64): it
# builds the linux binary with the flags of the release (.goreleaser.yaml),
# so that `floe version` in the container names the commit it came from, and
# sends this file a build context holding that binary alone.
#
#   docker run --rm -v floe-data:/home/nonroot floe:dev tables
#   docker run -d -p 8080:8080 -v floe-data:/home/nonroot \
#     -e FLOE_SERVER_TOKEN=… -e FLOE_SERVER_LISTEN=0.0.0.0:8080 floe:dev serve
#
# The working directory, /home/nonroot, is the volume: floe reads ./floe.yaml
# there and keeps its state under data_dir (./floe-data by default) there, so
# both outlive the container. FLOE_CONFIG names a floe.yaml elsewhere.
FROM gcr.io/distroless/static-debian12:nonroot

COPY floe /usr/local/bin/floe

USER nonroot:nonroot
WORKDIR /home/nonroot
VOLUME ["/home/nonroot"]
# floe serve's server.listen; it listens on loopback only unless told, and
# beyond loopback only with a token (README, "Daemon: floe serve").
EXPOSE 8080

ENTRYPOINT ["/usr/local/bin/floe"]
CMD ["--help"]
