# The command line as a container image, for a job that only records (change, heartbeat), and
# the receiver of Argo CD's and Flux's notifications (`serve`, its state folder a volume): the
# bundled dist/cli.cjs, which carries every library it uses, on Node 24 on Alpine, run as the
# image's unprivileged `node` user. Built, smoke-tested and pushed by .github/workflows/release.yml.
# The base is pinned by digest (node:24-alpine), so that a rebuild of a tag is the same image.
FROM node:24-alpine@sha256:ebfe2f90462722a7a4de65e91990e97fe0d401c70e0e762c5b53302f905ec1c1
LABEL org.opencontainers.image.title="change-tracking" \
      org.opencontainers.image.description="Records deploys as changes in a change-tracking service" \
      org.opencontainers.image.source="https://github.com/OWNER/change-tracking-action" \
      org.opencontainers.image.licenses="MIT"
WORKDIR /opt/change-tracking
COPY LICENSE ./
COPY dist/cli.cjs dist/cli-licenses.txt ./dist/
RUN ln -s /opt/change-tracking/dist/cli.cjs /usr/local/bin/change-tracking
# The receiver's state folder: the node user's, kept on a volume.
ENV CHANGE_TRACKING_STATE_DIR=/var/lib/change-tracking
RUN mkdir -p /var/lib/change-tracking && chown node:node /var/lib/change-tracking
VOLUME /var/lib/change-tracking
EXPOSE 8080
USER node
WORKDIR /home/node
ENTRYPOINT ["change-tracking"]
CMD ["--help"]
