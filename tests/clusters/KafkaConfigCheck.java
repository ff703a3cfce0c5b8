// Creates Kafka's Java admin client from properties, the way Spark's Kafka source would:
// the JAAS line is parsed and the PEM trust/key stores are loaded at creation.
// Usage: java -cp 'libs/*' KafkaConfigCheck.java FILE..., one "key=base64(value)" per line.
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;

public class KafkaConfigCheck {
    public static void main(String[] args) throws Exception {
        for (String file : args) {
            Properties props = new Properties();
            for (String line : Files.readAllLines(Path.of(file), StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                byte[] value = Base64.getDecoder().decode(line.substring(eq + 1));
                props.put(line.substring(0, eq), new String(value, StandardCharsets.UTF_8));
            }
            try (Admin admin = Admin.create(props)) {
                System.out.println("created " + file);
            }
        }
    }
}
