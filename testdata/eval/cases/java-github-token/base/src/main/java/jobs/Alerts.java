package jobs;

import java.util.logging.Logger;

public class Alerts {
    private static final Logger LOG = Logger.getLogger(Alerts.class.getName());

    public void jobFailed(String job, Exception e) {
        LOG.severe(job + " failed: " + e);
    }
}
