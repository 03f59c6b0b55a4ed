package io.lakeclone.delta;

import io.delta.storage.HadoopFileSystemLogStore;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.util.Iterator;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FSDataOutputStreamBuilder;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.s3a.RemoteFileChangedException;

/**
 * Delta's log on S3 for any number of drivers: each commit file is created with S3's put-if-absent.
 *
 * <p>Delta commits version N by creating {@code _delta_log/N.json} only if no one else has. Delta's
 * own S3 log store makes that check inside one JVM, so two drivers can both write version N and
 * one commit is lost. Here the check is the object store's: the PUT carries {@code If-None-Match: *}
 * (Hadoop's conditional create), the second writer of a version gets 412, and this turns that into
 * the {@link FileAlreadyExistsException} on which Delta re-reads the log and retries its commit at
 * N+1.
 *
 * <p>Set as {@code spark.delta.logStore.s3a.impl}; lakeclone's sessions on object storage do.
 */
public final class ConditionalCreateLogStore extends HadoopFileSystemLogStore {

  /** Hadoop's option asking S3A for a PUT with {@code If-None-Match: *}. */
  static final String CONDITIONAL_CREATE = "fs.option.create.conditional.overwrite";

  /** S3A's option to skip its own existence and parent checks: the conditional PUT is the check. */
  static final String CREATE_PERFORMANCE = "fs.s3a.create.performance";

  public ConditionalCreateLogStore(Configuration conf) {
    super(conf);
  }

  @Override
  public void write(Path path, Iterator<String> actions, Boolean overwrite, Configuration conf)
      throws IOException {
    FileSystem fs = path.getFileSystem(conf);
    if (overwrite) {
      // Only Delta's checkpoint pointer is overwritten, and a lost race there is harmless.
      try (FSDataOutputStream out = fs.create(path, true)) {
        writeLines(out, actions);
      }
      return;
    }
    FSDataOutputStreamBuilder<?, ?> create = fs.createFile(path);
    create.overwrite(false);
    create.must(CONDITIONAL_CREATE, true);
    create.opt(CREATE_PERFORMANCE, true);
    try (FSDataOutputStream out = create.build()) {
      writeLines(out, actions);
    } catch (RemoteFileChangedException | org.apache.hadoop.fs.FileAlreadyExistsException lost) {
      // S3 answered 412 at the PUT (when the stream closed): another writer created the file first.
      FileAlreadyExistsException exists = new FileAlreadyExistsException(path.toString());
      exists.initCause(lost);
      throw exists;
    }
  }

  private static void writeLines(FSDataOutputStream out, Iterator<String> actions)
      throws IOException {
    while (actions.hasNext()) {
      out.write((actions.next() + "\n").getBytes(StandardCharsets.UTF_8));
    }
  }

  /** A PUT makes an object visible whole or not at all. */
  @Override
  public Boolean isPartialWriteVisible(Path path, Configuration conf) {
    return false;
  }
}
